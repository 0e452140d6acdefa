import type { TokenType } from '../../common/oauth.constants.js';

/** Who a valid access token speaks for: attached to the request by the bearer strategy or the MAC verifier. */
export interface TokenPrincipal {
  tokenId: string;
  userId: string;
  clientId: string;
  scopes: ReadonlySet<string>;
  /** How the token was presented, so that later refusals (403 insufficient_scope) use the same scheme's challenge. */
  scheme: TokenType;
}

export const BEARER_REALM = 'latchkey';
