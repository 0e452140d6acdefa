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
  handle(request: TokenRequestDto, client: Client): Promise<TokenResponse>;
}

/** Injection token for the list of grant handlers. */
export const GRANT_HANDLERS = Symbol('GRANT_HANDLERS');
