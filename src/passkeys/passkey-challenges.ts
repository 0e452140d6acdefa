import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Clock } from '../common/clock.js';
import { uuidv7 } from '../common/random.js';
import { passkeyConfig, type PasskeyConfig } from '../config/passkey.config.js';
import type { Ceremony } from './passkey-challenge.entity.js';
import { PasskeyChallengeStore } from './passkey-challenge.store.js';

declare module '@fastify/secure-session' {
  interface SessionData {
    /** The passkey challenge this browser is answering: a row of passkey_challenges. */
    passkeyChallenge?: string;
  }
}

/**
 * The challenges of WebAuthn ceremonies (WebAuthn Level 3 §13.4.3): a row in the database named by
 * the browser's session cookie. Taking one deletes it, so each answers one response, on any instance.
 */
@Injectable()
export class PasskeyChallenges {
  constructor(
    private readonly store: PasskeyChallengeStore,
    private readonly clock: Clock,
    @Inject(passkeyConfig.KEY) private readonly config: PasskeyConfig,
  ) {}

  /** Keeps `challenge` for `ceremony` (for `userId` when someone is adding a passkey) and names it in the cookie. */
  async issue(request: FastifyRequest, ceremony: Ceremony, challenge: string, userId: string | null): Promise<void> {
    const id = uuidv7();
    await this.store.insert({ id, challenge, ceremony, userId, expiresAt: this.clock.inSeconds(this.config.ceremonySeconds) }, this.clock.now());
    request.session.set('passkeyChallenge', id);
  }

  /** The challenge this browser was given for `ceremony`, used up by this call; null when there is none, it expired or was used. */
  async take(request: FastifyRequest, ceremony: Ceremony): Promise<{ challenge: string; userId: string | null } | null> {
    const id = request.session.get('passkeyChallenge');
    if (!id) return null;
    request.session.set('passkeyChallenge', undefined);
    return this.store.consume(id, ceremony, this.clock.now());
  }
}
