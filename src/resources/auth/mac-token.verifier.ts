import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Clock } from '../../common/clock.js';
import { computeMac, MacHeaderError, macMatches, parseMacAuthorization, type MacCredentials } from '../../common/mac-signature.js';
import { TokenType } from '../../common/oauth.constants.js';
import { macTokenConfig, type MacTokenConfig } from '../../config/mac-token.config.js';
import { TokenKind } from '../../tokens/token.entity.js';
import { MacNoncesService } from '../../tokens/mac-nonces.service.js';
import { TokensService } from '../../tokens/tokens.service.js';
import { ApiError } from '../api-error.js';
import type { TokenPrincipal } from './token-principal.js';

const MAX_NONCE_LENGTH = 128;
const INVALID_TOKEN = 'The access token is invalid, expired or revoked';

/** An RFC 6750 §3.1 error under the MAC scheme: `WWW-Authenticate: MAC error="…"`, and the same code in the JSON body. */
export function macError(status: number, error: string, description: string, extra: Record<string, string> = {}): ApiError {
  const parameters = Object.entries({ error, error_description: description, ...extra })
    .map(([name, value]) => `${name}="${value.replace(/["\\]/g, '')}"`)
    .join(', ');
  return new ApiError(status, description, { error, headers: { 'WWW-Authenticate': `MAC ${parameters}` } });
}

/**
 * Checks a MAC-signed request (draft-ietf-oauth-v2-http-mac-02 §3, §4.1): the token is an active
 * MAC access token, its ts is within MAC_TIMESTAMP_WINDOW_SECONDS of our clock, the MAC recomputed
 * with its mac_key over the request as we received it matches (constant time), and the nonce has
 * not been used with this token and ts before (recorded in the database, so across instances).
 * Every step that can fail runs before the nonce is recorded, so a refused request burns nothing.
 */
@Injectable()
export class MacTokenVerifier {
  constructor(
    private readonly tokens: TokensService,
    private readonly nonces: MacNoncesService,
    private readonly clock: Clock,
    @Inject(macTokenConfig.KEY) private readonly config: MacTokenConfig,
  ) {}

  async verify(request: FastifyRequest): Promise<TokenPrincipal> {
    const credentials = this.credentials(request.headers.authorization ?? '');
    const token = await this.tokens.findByValue(credentials.id);
    // Refresh tokens never open the API; client-credentials tokens (no user) own no items; a bearer token carries no key to sign with.
    if (!token || token.kind !== TokenKind.Access || token.userId === null || !this.tokens.isActive(token)) throw macError(401, 'invalid_token', INVALID_TOKEN);
    if (token.tokenType !== TokenType.Mac) throw macError(401, 'invalid_token', 'This access token is not a MAC token; send it as "Authorization: Bearer <token>"');

    const now = Math.floor(this.clock.now().getTime() / 1000);
    const ts = Number(credentials.ts);
    if (Math.abs(now - ts) > this.config.timestampWindowSeconds) {
      throw macError(401, 'invalid_token', `The request timestamp is more than ${this.config.timestampWindowSeconds} seconds away from the server's clock`);
    }

    const macKey = await this.tokens.macKeyOf(token);
    if (macKey === undefined) throw macError(401, 'invalid_token', INVALID_TOKEN);
    const expected = computeMac(macKey, {
      ts: credentials.ts,
      nonce: credentials.nonce,
      method: request.method,
      // §3.2.1: the request-target as sent, path and query unchanged (request.url is the raw one).
      requestUri: request.url,
      // Host and port as the client addressed us: the Host header, or X-Forwarded-Host from a trusted proxy.
      host: request.hostname,
      port: request.port ?? (request.protocol === 'https' ? 443 : 80),
      ext: credentials.ext,
    });
    if (!macMatches(credentials.mac, expected)) throw macError(401, 'invalid_token', 'The request MAC does not match');

    // §4.1: a nonce/timestamp pair is used once per token. Kept until the timestamp leaves the window.
    const expiresAt = new Date((ts + this.config.timestampWindowSeconds) * 1000);
    if (!(await this.nonces.use(token.id, credentials.nonce, credentials.ts, expiresAt))) throw macError(401, 'invalid_token', 'The nonce was already used');

    return { tokenId: token.id, userId: token.userId, clientId: token.clientId, scopes: new Set(token.scope === '' ? [] : token.scope.split(' ')), scheme: TokenType.Mac };
  }

  private credentials(header: string): MacCredentials {
    try {
      const credentials = parseMacAuthorization(header);
      if (credentials.nonce.length > MAX_NONCE_LENGTH) throw new MacHeaderError(`The MAC nonce may be at most ${MAX_NONCE_LENGTH} characters`);
      return credentials;
    } catch (error) {
      if (error instanceof MacHeaderError) throw macError(400, 'invalid_request', error.message);
      throw error;
    }
  }
}
