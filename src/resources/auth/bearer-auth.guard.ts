import { Injectable, type ExecutionContext } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { isMacAuthorization } from '../../common/mac-signature.js';
import { Strategy } from '../../common/oauth.constants.js';
import { ApiError } from '../api-error.js';
import { MacTokenVerifier } from './mac-token.verifier.js';
import { BEARER_REALM, type TokenPrincipal } from './token-principal.js';

/**
 * RFC 6750 §3: no token → 401 with a bare `Bearer realm` challenge (and `MAC`); an invalid, expired
 * or revoked token → 401 error="invalid_token"; a malformed request → 400 error="invalid_request".
 * Bearer tokens go through passport-http-bearer; a MAC-signed request (draft-ietf-oauth-v2-http-mac)
 * goes to MacTokenVerifier instead, which answers with the same codes under the MAC scheme. A plain
 * service rather than a second passport strategy: passport's fail/challenge plumbing would only
 * carry the error code we already know at the point of failure.
 */
@Injectable()
export class BearerAuthGuard extends AuthGuard(Strategy.Bearer) {
  constructor(private readonly mac: MacTokenVerifier) {
    super();
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    // RFC 9700 §2.5 / RFC 6750 §2.3: tokens in URLs leak through logs and Referer; only the header is accepted.
    if (request.query && typeof request.query === 'object' && 'access_token' in request.query) {
      throw bearerError(400, 'invalid_request', 'Send the access token in the Authorization header, not in the URL');
    }
    const header = request.headers.authorization;
    if (header !== undefined && isMacAuthorization(header)) {
      (request as FastifyRequest & { user: TokenPrincipal }).user = await this.mac.verify(request);
      return true;
    }
    if (header !== undefined && !/^bearer\s/i.test(header)) {
      // RFC 6750 §3.1: an unsupported authentication method gets the bare challenge, no error code.
      throw missingToken();
    }
    return (await super.canActivate(context)) as boolean;
  }

  override handleRequest<TUser = TokenPrincipal>(err: unknown, principal: TUser | false, info: unknown, _context?: ExecutionContext, status?: unknown): TUser {
    if (err) throw err;
    if (principal) return principal;
    const challenge = typeof info === 'string' ? info : '';
    if (challenge.includes('invalid_token')) throw bearerError(401, 'invalid_token', 'The access token is invalid, expired or revoked');
    if (challenge.includes('invalid_request') || status === 400) throw bearerError(400, 'invalid_request', 'Send exactly one access token, in the Authorization header');
    throw missingToken();
  }
}

/** Both schemes the API accepts are offered (RFC 9110 §11.6.1: several challenges, comma-separated). */
function missingToken(): ApiError {
  return new ApiError(401, 'This API needs an access token: send "Authorization: Bearer <token>", or a MAC-signed request for a MAC token', {
    error: 'unauthorized',
    headers: { 'WWW-Authenticate': `Bearer realm="${BEARER_REALM}", MAC` },
  });
}

/** An RFC 6750 §3.1 error, in the challenge and in the JSON body alike. */
export function bearerError(status: number, error: string, description: string, extra: Record<string, string> = {}): ApiError {
  const parameters = Object.entries({ realm: BEARER_REALM, error, error_description: description, ...extra })
    .map(([name, value]) => `${name}="${value.replace(/["\\]/g, '')}"`)
    .join(', ');
  return new ApiError(status, description, { error, headers: { 'WWW-Authenticate': `Bearer ${parameters}` } });
}
