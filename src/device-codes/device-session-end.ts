import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { publicSessionId } from '../sessions/session-id.js';
import { SessionEndListeners, type EndedSession } from '../sessions/session-end-listeners.js';
import { DeviceAuthorizationStore } from './device-authorization.store.js';

/**
 * When a sign-in session ends, what it approved for a device and the device has not yet picked up
 * is not handed out any more, in the transaction that ends it. The tokens a device already has
 * carry the session's sid and go with the session's other grants (SessionRefreshTokens).
 */
@Injectable()
export class DeviceSessionEnd implements OnModuleInit {
  constructor(
    private readonly endListeners: SessionEndListeners,
    private readonly store: DeviceAuthorizationStore,
  ) {}

  onModuleInit(): void {
    this.endListeners.add((ended, manager) => this.sessionsEnded(ended, manager));
  }

  private async sessionsEnded(ended: readonly EndedSession[], manager: EntityManager): Promise<void> {
    for (const session of ended) await this.store.denyApprovedInSession(session.userId, publicSessionId(session.id), manager);
  }
}
