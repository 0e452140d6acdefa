import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { uuidv7 } from '../common/random.js';
import { Clock } from '../common/clock.js';
import { generateSecret, hashSecret, SECRET_PREFIX } from '../common/secrets.js';
import { oauthConfig, type OAuthConfig } from '../config/oauth.config.js';
import type { Gate } from '../database/gate.js';
import { Transactions } from '../database/transactions.js';
import type { AuthorizationCode } from './authorization-code.entity.js';
import { AuthorizationCodeStore } from './authorization-code.store.js';

export interface CodeGrant {
  clientId: string;
  userId: string;
  redirectUri: string;
  redirectUriInRequest: boolean;
  scope: string;
  codeChallenge: string | null;
  /** OpenID Connect: the request's nonce, and when the person signed in. */
  nonce?: string | null;
  authTime?: Date | null;
  sid?: string | null;
  /** How the person signed in (RFC 8176 amr, space-separated), for the ID token's amr and acr. */
  amr?: string | null;
  /** RFC 8707: the resources the request named, space-separated; null or absent when none. */
  resources?: string | null;
  /** RFC 9449 §10: the DPoP key thumbprint the code is bound to; null or absent when none. */
  dpopJkt?: string | null;
  /** A shorter lifetime than CODE_TTL_SECONDS (FAPI 2.0 §5.3.2.1: at most 60 s); never a longer one. */
  ttlSeconds?: number;
}

@Injectable()
export class CodesService {
  constructor(
    private readonly store: AuthorizationCodeStore,
    @Inject(oauthConfig.KEY) private readonly config: OAuthConfig,
    private readonly clock: Clock,
    private readonly transactions: Transactions,
  ) {}

  /** Issues a code for an approved authorization request, in the caller's transaction when given; returns the code, of which only the hash is kept. */
  async issue(grant: CodeGrant, manager?: EntityManager): Promise<string> {
    const code = generateSecret(SECRET_PREFIX.authorizationCode);
    const { ttlSeconds, ...bound } = grant;
    await this.store.insert({
      // Time-ordered like the token ids (tokens.service.ts); it becomes the family id of the tokens.
      id: uuidv7(),
      codeHash: hashSecret(code),
      ...bound,
      nonce: grant.nonce ?? null,
      authTime: grant.authTime ?? null,
      sid: grant.sid ?? null,
      amr: grant.amr ?? null,
      resources: grant.resources ?? null,
      dpopJkt: grant.dpopJkt ?? null,
      expiresAt: this.clock.inSeconds(Math.min(this.config.codeTtlSeconds, ttlSeconds ?? Infinity)),
      createdAt: this.clock.now(),
    }, manager);
    return code;
  }

  findByCode(code: string): Promise<AuthorizationCode | null> {
    return this.store.findByHash(hashSecret(code));
  }

  /**
   * Marks the code used; exactly one of any number of concurrent callers (on any instance) sees
   * `true`. RFC 6749 §4.1.2: the code MUST NOT be used more than once.
   */
  /** The conditional UPDATE that burns the code once, for TokensService.storeAfter: the tokens are stored only if it does. */
  consumeGate(codeId: string): Gate {
    return this.store.consumeGate(codeId, this.clock.now());
  }

  consume(codeId: string, manager?: EntityManager): Promise<boolean> {
    const consume = (within: EntityManager) => this.store.consume(codeId, this.clock.now(), within);
    return manager ? consume(manager) : this.transactions.write(consume);
  }
}
