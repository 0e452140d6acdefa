import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Clock } from '../common/clock.js';
import { publicSessionId } from '../sessions/session-id.js';
import { SessionEndListeners, type EndedSession } from '../sessions/session-end-listeners.js';
import { TokenStore } from '../tokens/token.store.js';

/**
 * Back-Channel Logout 1.0 §2.7: "Refresh tokens issued without the offline_access property to a
 * session being logged out SHOULD be revoked." When a session ends (sign-out, RP-initiated logout,
 * a password change, an administrator), the grants made in it stop working, in the transaction that
 * ends it: their refresh tokens, their access tokens and the tokens exchanged from those (issue 34:
 * a person who signs out ends what services do for them too); grants made with offline_access
 * outlive it, as Core §11 intends.
 */
@Injectable()
export class SessionRefreshTokens implements OnModuleInit {
  constructor(
    private readonly endListeners: SessionEndListeners,
    private readonly tokens: TokenStore,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.endListeners.add((ended, manager) => this.sessionsEnded(ended, manager));
  }

  /** Within the session's end: everything through `manager`, nothing else awaited (Transactions' rule). */
  private async sessionsEnded(ended: readonly EndedSession[], manager: EntityManager): Promise<void> {
    const now = this.clock.now();
    // TokenStore has this instance drop the access tokens it keeps once the session's end commits.
    for (const session of ended) await this.tokens.revokeSessionGrants(session.userId, publicSessionId(session.id), now, manager);
  }
}
