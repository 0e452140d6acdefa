import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/**
 * Work that must happen, in the same transaction, when an administrator or SCIM names people as
 * members of a group (added, or kept by a replace), whether or not they were in it already.
 * identity-providers/ registers here: a membership an upstream's sync made becomes the
 * administrator's, so the upstream dropping the group later leaves it (issue 46). Modules above
 * groups register, so groups depends on none of them (as SessionEndListeners does for sessions).
 * A listener does everything through the manager it is given and awaits nothing else.
 */
@Injectable()
export class MembershipListeners {
  private readonly listeners: ((groupId: string, userIds: readonly string[], manager: EntityManager) => Promise<void>)[] = [];

  add(listener: (groupId: string, userIds: readonly string[], manager: EntityManager) => Promise<void>): void {
    this.listeners.push(listener);
  }

  async named(groupId: string, userIds: readonly string[], manager: EntityManager): Promise<void> {
    if (userIds.length === 0) return;
    for (const listener of this.listeners) await listener(groupId, userIds, manager);
  }
}
