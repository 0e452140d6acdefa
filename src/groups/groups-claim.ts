import { Injectable } from '@nestjs/common';
import { GroupsClaimSetting, type Client } from '../clients/client.entity.js';
import { GroupStore } from './group.store.js';
import type { Group } from './group.entity.js';

/**
 * The most entries the `groups` claim carries. A token is sent in headers (a JWT access token) and
 * URLs (an ID token in a fragment); a hundred names of up to 256 characters keep it within the
 * 8 KiB many servers accept.
 */
export const GROUPS_CLAIM_LIMIT = 100;

export interface GroupsClaimValue {
  groups?: string[];
  /** Present (true) only when the person is in more groups than the claim carries. */
  groups_overflow?: true;
}

/**
 * The `groups` claim (issue 46) for ID tokens, userinfo, introspection and JWT access tokens: the
 * person's effective groups (nested ones included), by name or by id as the client opted in.
 * Released whenever the client opted in and a person stands behind the token, whatever the scope:
 * the opt-in is the administrator's, per client, so no scope is needed to ask for it.
 *
 * Overflow rule: when the person is in more than GROUPS_CLAIM_LIMIT groups, the claim carries the
 * groups among the client's required_groups the person is in first, then the others in name order,
 * up to the limit, and `groups_overflow: true` says the list is cut (no _claim_names/_claim_sources
 * distributed claims). A client that needs the rest asks the SCIM API.
 *
 * Cost: nothing for a client that did not opt in (the setting is on the client, already read);
 * one query (a recursive CTE, GroupStore.effectiveGroupsOf) for one that did.
 */
@Injectable()
export class GroupsClaim {
  constructor(private readonly store: GroupStore) {}

  async of(client: Pick<Client, 'groupsClaim' | 'requiredGroups'>, userId: string | null): Promise<GroupsClaimValue> {
    const setting = client.groupsClaim ?? GroupsClaimSetting.None;
    if (setting === GroupsClaimSetting.None || userId === null) return {};
    const { groups, overflow } = selected(await this.store.effectiveGroupsOf(userId), client.requiredGroups ?? []);
    const values = groups.map((group) => (setting === GroupsClaimSetting.Ids ? group.id : group.displayName));
    return overflow ? { groups: values, groups_overflow: true } : { groups: values };
  }
}

/** The groups the claim carries, in name order (the overflow rule above); `effective` comes in name order. */
export function selected(effective: readonly Group[], required: readonly string[]): { groups: Group[]; overflow: boolean } {
  if (effective.length <= GROUPS_CLAIM_LIMIT) return { groups: [...effective], overflow: false };
  const wanted = new Set(required);
  const first = effective.filter((group) => wanted.has(group.id)).slice(0, GROUPS_CLAIM_LIMIT);
  const chosen = new Set(first.map((group) => group.id));
  for (const group of effective) {
    if (chosen.size >= GROUPS_CLAIM_LIMIT) break;
    chosen.add(group.id);
  }
  return { groups: effective.filter((group) => chosen.has(group.id)), overflow: true };
}
