import { TokenType } from '../../common/oauth.constants.js';
import type { IssuedTokens } from '../../tokens/tokens.service.js';

/** RFC 6749 §5.1 successful response. */
export interface TokenResponse {
  access_token: string;
  token_type: TokenType;
  expires_in: number;
  refresh_token?: string;
  scope: string;
}

export function toTokenResponse(issued: IssuedTokens): TokenResponse {
  return {
    access_token: issued.accessToken,
    token_type: TokenType.Bearer,
    expires_in: issued.expiresIn,
    ...(issued.refreshToken ? { refresh_token: issued.refreshToken } : {}),
    scope: issued.scope,
  };
}
