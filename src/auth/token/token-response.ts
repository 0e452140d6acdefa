import { MacAlgorithm, TokenType, type DPOP_SCHEME } from '../../common/oauth.constants.js';
import type { IssuedTokens } from '../../tokens/tokens.service.js';

/** RFC 6749 §5.1 successful response; a MAC token adds mac_key and mac_algorithm (draft-ietf-oauth-v2-http-mac-02 §4.1). */
export interface TokenResponse {
  access_token: string;
  /** bearer, mac, or DPoP (RFC 9449 §5). */
  token_type: TokenType | typeof DPOP_SCHEME;
  mac_key?: string;
  mac_algorithm?: MacAlgorithm;
  expires_in: number;
  refresh_token?: string;
  scope: string;
  /** OpenID Connect Core §3.1.3.3: when the grant holds openid. */
  id_token?: string;
  /** RFC 8693 §2.2.1: the type of the token a token exchange issued. */
  issued_token_type?: string;
}

export function toTokenResponse(issued: IssuedTokens, idToken?: string): TokenResponse {
  return {
    access_token: issued.accessToken,
    token_type: issued.tokenType,
    ...(issued.macKey ? { mac_key: issued.macKey, mac_algorithm: MacAlgorithm.HmacSha256 } : {}),
    expires_in: issued.expiresIn,
    ...(issued.refreshToken ? { refresh_token: issued.refreshToken } : {}),
    scope: issued.scope,
    ...(idToken ? { id_token: idToken } : {}),
  };
}
