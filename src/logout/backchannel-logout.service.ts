import { Injectable, type OnModuleInit } from '@nestjs/common';
import { uuidv7 } from '../common/random.js';
import { In, type EntityManager } from 'typeorm';
import { Client } from '../clients/client.entity.js';
import { Clock } from '../common/clock.js';
import { SubjectIdentifiers } from '../openid/subject-identifiers.js';
import { publicSessionId } from '../sessions/session-id.js';
import { SessionEndListeners, type EndedSession } from '../sessions/session-end-listeners.js';
import { SessionStore } from '../sessions/session.store.js';
import { DeliveryStatus, type LogoutDelivery } from './logout-delivery.entity.js';
import { LogoutDeliveryStore } from './logout-delivery.store.js';

/**
 * Back-Channel Logout 1.0 §2.7: when a session ends, every client that signed the person in through
 * it and registered a backchannel_logout_uri is owed a logout token. The notifications are written
 * in the transaction that ends the session, so none is lost and none is owed for a session that did
 * not end; BackchannelLogoutSender delivers them.
 */
@Injectable()
export class BackchannelLogout implements OnModuleInit {
  constructor(
    private readonly endListeners: SessionEndListeners,
    private readonly sessions: SessionStore,
    private readonly deliveries: LogoutDeliveryStore,
    private readonly subjects: SubjectIdentifiers,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.endListeners.add((ended, manager) => this.sessionsEnded(ended, manager));
  }

  /** Within the session's end: everything through `manager`, nothing else awaited (Transactions' rule). */
  private async sessionsEnded(ended: readonly EndedSession[], manager: EntityManager): Promise<void> {
    const links = await this.sessions.clientsOf(ended.map((session) => session.id), manager);
    if (links.length === 0) return;
    const clients = new Map((await manager.findBy(Client, { id: In([...new Set(links.map((link) => link.clientId))]) })).map((client) => [client.id, client]));
    const users = new Map(ended.map((session) => [session.id, session.userId]));
    const now = this.clock.now();
    const owed: LogoutDelivery[] = [];
    for (const link of links) {
      const client = clients.get(link.clientId);
      if (!client?.openId.backchannelLogoutUri) continue;
      owed.push({
        id: uuidv7(),
        clientId: client.id,
        subject: this.subjects.of(client, users.get(link.sessionId)!),
        sid: publicSessionId(link.sessionId),
        status: DeliveryStatus.Pending,
        attempts: 0,
        nextAttemptAt: now,
        lastError: null,
        createdAt: now,
        deliveredAt: null,
      });
    }
    await this.deliveries.enqueue(owed, manager);
  }
}
