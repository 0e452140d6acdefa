import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { computeMac, macMatches, type MacCredentials } from '../common/mac-signature.js';
import { macTokenConfig, type MacTokenConfig } from '../config/mac-token.config.js';
import type { Token } from '../tokens/token.entity.js';
import { MacNonceStore } from '../tokens/mac-nonce.store.js';
import { TokensService } from '../tokens/tokens.service.js';
import type { AccessRefusal } from './access-denied.js';

/** The request as the client addressed it, which its MAC covers (§3.2.1). */
export interface SignedRequest {
  method: string;
  /** The request-target as sent, path and query unchanged. */
  requestUri: string;
  /** Host and port as the client addressed us: the Host header, or X-Forwarded-Host from a trusted proxy. */
  host: string;
  port: number;
}

/**
 * The proof of possession of a MAC token (draft-ietf-oauth-v2-http-mac-02 §4.1): its ts is within
 * MAC_TIMESTAMP_WINDOW_SECONDS of our clock, the MAC recomputed with the token's mac_key over the
 * request matches (constant time), and the nonce has not been used with this token and ts before
 * (recorded in the database, so across instances). Every step that can fail runs before the nonce
 * is recorded, so a refused request burns nothing.
 */
@Injectable()
export class MacProof {
  constructor(
    private readonly tokens: TokensService,
    private readonly nonces: MacNonceStore,
    private readonly clock: Clock,
    @Inject(macTokenConfig.KEY) private readonly config: MacTokenConfig,
  ) {}

  /** undefined when the proof holds. */
  async verify(token: Token, credentials: MacCredentials, request: SignedRequest): Promise<AccessRefusal | undefined> {
    const now = Math.floor(this.clock.now().getTime() / 1000);
    const ts = Number(credentials.ts);
    if (Math.abs(now - ts) > this.config.timestampWindowSeconds) {
      return { error: 'invalid_token', description: `The request timestamp is more than ${this.config.timestampWindowSeconds} seconds away from the server's clock` };
    }
    const macKey = await this.tokens.macKeyOf(token);
    if (macKey === undefined) return { error: 'invalid_token', description: 'The access token is invalid, expired or revoked' };
    const expected = computeMac(macKey, { ts: credentials.ts, nonce: credentials.nonce, ext: credentials.ext, ...request });
    if (!macMatches(credentials.mac, expected)) return { error: 'invalid_token', description: 'The request MAC does not match' };

    // §4.1: a nonce/timestamp pair is used once per token. Kept until the timestamp leaves the window.
    const expiresAt = new Date((ts + this.config.timestampWindowSeconds) * 1000);
    if (!(await this.nonces.use(token.id, credentials.nonce, credentials.ts, expiresAt))) return { error: 'invalid_token', description: 'The nonce was already used' };
    return undefined;
  }
}
