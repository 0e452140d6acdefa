import { Injectable } from '@nestjs/common';
import { In, Not, type EntityManager } from 'typeorm';
import { UpstreamGroupMembership } from './upstream-group-membership.entity.js';

/** The upstream_group_memberships table; every call runs in the sign-in's transaction. */
@Injectable()
export class UpstreamGroupMembershipStore {
  /** What `idpId` vouched for at the person's last sign-in: group id → whether the sync made the membership. */
  async of(idpId: string, userId: string, manager: EntityManager): Promise<Map<string, boolean>> {
    const rows = await manager.find(UpstreamGroupMembership, { where: { idpId, userId } });
    return new Map(rows.map((row) => [row.groupId, row.addedByUpstream]));
  }

  /** Records (or updates) that `idpId` vouches for the membership; ON CONFLICT: a concurrent sign-in of the same person may have written it. */
  async put(row: Pick<UpstreamGroupMembership, 'idpId' | 'userId' | 'groupId' | 'addedByUpstream'>, manager: EntityManager): Promise<void> {
    await manager.upsert(UpstreamGroupMembership, row, { conflictPaths: ['idpId', 'userId', 'groupId'] });
  }

  async delete(idpId: string, userId: string, groupId: string, manager: EntityManager): Promise<void> {
    await manager.delete(UpstreamGroupMembership, { idpId, userId, groupId });
  }

  /**
   * Another provider also vouches for the membership (its own sign-in found it there): it becomes
   * that provider's to take out, as if it had made it. Whether there was one.
   */
  async handOver(idpId: string, userId: string, groupId: string, manager: EntityManager): Promise<boolean> {
    return ((await manager.update(UpstreamGroupMembership, { userId, groupId, idpId: Not(idpId) }, { addedByUpstream: true })).affected ?? 0) > 0;
  }

  /** An administrator or SCIM named these people as members of the group: no provider's sync made those memberships any more. */
  async disown(groupId: string, userIds: readonly string[], manager: EntityManager): Promise<void> {
    await manager.update(UpstreamGroupMembership, { groupId, userId: In([...userIds]), addedByUpstream: true }, { addedByUpstream: false });
  }
}
