import type { FastifyRequest } from 'fastify';
import type { Client } from '../../clients/client.entity.js';
import type { GrantType } from '../../common/oauth.constants.js';
import type { TokenRequestDto } from '../token/token-request.dto.js';
import type { TokenResponse } from '../token/token-response.js';

/**
 * One grant type of the token endpoint (RFC 6749 §4). The endpoint has already authenticated the
 * client and checked that it is registered for this grant before `handle` runs.
 */
export interface GrantHandler {
  readonly grantType: GrantType;
  /** `http` is the HTTP request itself, for grants that need more than its parameters (the password grant's rate limit). */
  handle(request: TokenRequestDto, client: Client, http: FastifyRequest): Promise<TokenResponse>;
}

/** Injection token for the list of grant handlers. */
export const GRANT_HANDLERS = Symbol('GRANT_HANDLERS');
