/** Who a valid access token speaks for: attached to the request by the bearer strategy. */
export interface TokenPrincipal {
  tokenId: string;
  userId: string;
  clientId: string;
  scopes: ReadonlySet<string>;
}

export const BEARER_REALM = 'latchkey';
