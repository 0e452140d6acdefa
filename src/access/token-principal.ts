import type { Client } from '../clients/client.entity.js';
import type { DPOP_SCHEME, TokenType } from '../common/oauth.constants.js';

/**
 * How the request proved its token: `Authorization: Bearer` (RFC 6750 §2.1), a MAC signature
 * (draft-ietf-oauth-v2-http-mac-02), or `Authorization: DPoP` with a proof (RFC 9449 §7.1).
 */
export type AccessScheme = TokenType | typeof DPOP_SCHEME;

/** An active access token, as AccessTokenAuthenticator found it. */
export interface TokenPrincipal {
  kind: 'access_token';
  tokenId: string;
  clientId: string;
  /** The person the token speaks for; null for a client's own token (client_credentials, RFC 6749 §4.4). */
  userId: string | null;
  scopes: ReadonlySet<string>;
  /** The scheme the token was presented with, which its type dictates (a MAC token only with its signature, a DPoP-bound one only with a proof). */
  scheme: AccessScheme;
}

/** A token that speaks for a person: what the data API requires (a client's own token owns no items). */
export interface UserTokenPrincipal extends TokenPrincipal {
  userId: string;
}

/** A client's registration access token (RFC 7592 §3): it opens that client's registration, nothing else. */
export interface RegistrationPrincipal {
  kind: 'registration_access_token';
  clientId: string;
  client: Client;
  scheme: AccessScheme;
}

/** Whoever a protected route's credentials speak for; attached to the request as `request.user`. */
export type Principal = TokenPrincipal | RegistrationPrincipal;

export const BEARER_REALM = 'latchkey';
