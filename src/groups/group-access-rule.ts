import { Injectable } from '@nestjs/common';
import type { Client } from '../clients/client.entity.js';
import { GroupStore } from './group.store.js';

/** What a grant answers (invalid_grant, RFC 6749 §5.2) for a person the rule keeps out. */
export const NOT_IN_REQUIRED_GROUP = 'The person is not, or no longer, in a group this application requires';

/**
 * A client's group rule (issue 46, `clients:groups --require`): only people in at least one of the
 * client's required groups, directly or through a group in it, may sign in to it or keep getting
 * its tokens. The one function the authentication policy (through the Presence that
 * AuthorizeService builds) and the grants that issue for a person without it (refresh, password,
 * device code) ask, so they never disagree: a person taken out of the group is refused at the
 * next sign-in and at the next refresh alike.
 */
@Injectable()
export class GroupAccessRule {
  constructor(private readonly store: GroupStore) {}

  /** Whether the client restricts sign-in to some groups; no query. */
  static restricts(client: Pick<Client, 'requiredGroups'>): boolean {
    return (client.requiredGroups?.length ?? 0) > 0;
  }

  /** Whether the person may use the client: always when it requires no group (and then without a query); else one query. */
  async allows(client: Pick<Client, 'requiredGroups'>, userId: string): Promise<boolean> {
    if (!GroupAccessRule.restricts(client)) return true;
    const required = new Set(client.requiredGroups);
    return (await this.store.effectiveGroupsOf(userId)).some((group) => required.has(group.id));
  }
}
