import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service.js';
import { GroupsService } from '../groups/groups.service.js';
import { MembershipListeners } from '../groups/membership-listeners.js';
import { GROUPS_MATCH, groupsSourceOf, type UpstreamProvider } from './identity-provider-settings.js';
import { UpstreamGroupMembershipStore } from './upstream-group-membership.store.js';
import { groupsOverflowed, UPSTREAM_GROUPS_LIMIT, upstreamGroupValues } from './upstream-group-values.js';

/** What one sign-in's sync changed, by group id. */
export interface GroupSyncOutcome {
  joined: string[];
  left: string[];
}

/**
 * Groups from an upstream identity provider's claims (issue 46), synced at each sign-in through it.
 *
 * The rule: the person's memberships that came from this provider are made to match the groups its
 * claim (OpenID Connect) or attribute (SAML) names now, matched by name or external id to groups
 * that exist here (or, with groups_create, to groups created by name). A named group the person is
 * not in is joined; a group the provider named last time and no longer names is left, but only if
 * this provider's sync made that membership: one an administrator or SCIM made (the person was in
 * the group when the provider first named it) stays, and so does one another provider still
 * vouches for. Every change is audited (`group.members_changed`, actor `idp:<id>`), in the
 * caller's transaction (the sign-in's link bookkeeping).
 */
@Injectable()
export class UpstreamGroups implements OnModuleInit {
  private readonly logger = new Logger('Federation');

  constructor(
    private readonly groups: GroupsService,
    private readonly store: UpstreamGroupMembershipStore,
    private readonly audit: AuditService,
    private readonly membershipListeners: MembershipListeners,
  ) {}

  onModuleInit(): void {
    // A membership an administrator or SCIM names becomes theirs: the provider dropping the group later leaves it.
    this.membershipListeners.add((groupId, userIds, manager) => this.store.disown(groupId, userIds, manager));
  }

  /** Syncs; null when the provider syncs no groups, or its value had a shape that says nothing (then nothing changes). */
  async sync(provider: UpstreamProvider, userId: string, claims: Record<string, unknown>, manager: EntityManager): Promise<GroupSyncOutcome | null> {
    const source = groupsSourceOf(provider.settings);
    if (source === null) return null;
    const actor = `idp:${provider.id}`;
    // Distributed claims (OpenID Connect Core §5.6.2): Entra ID's "groups overage" sends, instead of
    // a long list, `_claim_names.groups` pointing elsewhere. The claim's absence then says nothing
    // about the person's groups, so nothing is changed (reading the list from Microsoft Graph is not built).
    if (groupsOverflowed(claims, source)) {
      this.logger.warn(`${provider.id}: the ${source} claim was sent as a distributed claim (too many groups); the person's groups were left as they were`);
      return null;
    }
    const read = upstreamGroupValues(claims[source]);
    if (read === null) {
      this.logger.warn(`${provider.id}: the ${source} value is neither a list nor a string; the person's groups were left as they were`);
      return null;
    }
    if (read.truncated) {
      this.logger.warn(`${provider.id}: ${read.received} group values for user ${userId}; only the first ${UPSTREAM_GROUPS_LIMIT} were read`);
      await this.audit.record({ actor, action: 'user.upstream_groups_truncated', subject: `user:${userId}`, details: { idp: provider.id, received: read.received, read: UPSTREAM_GROUPS_LIMIT } }, manager);
    }
    const { groupsMatch, groupsCreate } = provider.settings;
    const found = await this.groups.groupsMatching(read.values, groupsMatch, manager);
    if (groupsCreate && groupsMatch === GROUPS_MATCH.Name) {
      const known = new Set(found.map((group) => group.displayName));
      for (const name of read.values.filter((value) => !known.has(value))) {
        const created = await this.groups.createInTransaction(name, actor, manager);
        if (created) found.push(created);
      }
    }
    const wanted = new Set(found.map((group) => group.id));
    const vouched = await this.store.of(provider.id, userId, manager);
    const held = await this.groups.directGroupIdsIn(userId, manager);
    const outcome: GroupSyncOutcome = { joined: [], left: [] };
    for (const groupId of wanted) {
      if (held.has(groupId)) {
        // In it already: by an administrator or SCIM (theirs to take out), unless this provider's sync put them there.
        if (!vouched.has(groupId)) await this.store.put({ idpId: provider.id, userId, groupId, addedByUpstream: false }, manager);
        continue;
      }
      // Not in it: joined (again, if an administrator took them out since: the upstream still says they are in it).
      await this.groups.setPersonInGroup(groupId, userId, true, actor, manager);
      await this.store.put({ idpId: provider.id, userId, groupId, addedByUpstream: true }, manager);
      outcome.joined.push(groupId);
    }
    for (const [groupId, addedByUpstream] of vouched) {
      if (wanted.has(groupId)) continue;
      await this.store.delete(provider.id, userId, groupId, manager);
      if (!addedByUpstream || !held.has(groupId)) continue;
      if (await this.store.handOver(provider.id, userId, groupId, manager)) continue;
      if (await this.groups.setPersonInGroup(groupId, userId, false, actor, manager)) outcome.left.push(groupId);
    }
    return outcome;
  }
}
