import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/** A session that just ended, and for whom. */
export interface EndedSession {
  /** The row id (SHA-256 of the cookie's secret). */
  id: string;
  userId: string;
}

/**
 * Work that must happen when sessions end, in the same transaction as their end (a transactional
 * outbox: back-channel logout notifications are recorded exactly when the end commits). A listener
 * does everything through the manager it is given and awaits nothing else (Transactions' rule).
 * Modules above sessions register here, so sessions depends on none of them.
 */
@Injectable()
export class SessionEndListeners {
  private readonly listeners: ((ended: readonly EndedSession[], manager: EntityManager) => Promise<void>)[] = [];

  add(listener: (ended: readonly EndedSession[], manager: EntityManager) => Promise<void>): void {
    this.listeners.push(listener);
  }

  async notify(ended: readonly EndedSession[], manager: EntityManager): Promise<void> {
    if (ended.length === 0) return;
    for (const listener of this.listeners) await listener(ended, manager);
  }
}
