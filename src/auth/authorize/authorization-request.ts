import type { Client } from '../../clients/client.entity.js';
import type { ResponseMode, ResponseType } from '../../common/oauth.constants.js';

/** A validated authorization request (RFC 6749 §4.1.1 with RFC 7636 §4.3). */
export interface AuthorizationRequest {
  client: Client;
  /** `code`, or `token` for a client registered for the implicit grant (RFC 6749 §4.2.1). */
  responseType: ResponseType;
  /** Where the response parameters go: the query for codes, the fragment for tokens (RFC 6749 §4.2.2). */
  responseMode: ResponseMode;
  /** Where the response goes: the request's redirect_uri, or the client's only registered one. */
  redirectUri: string;
  redirectUriInRequest: boolean;
  /** Granted scope if approved: the requested one, or the client's registered scope when none was requested. */
  scope: string[];
  state?: string;
  codeChallenge: string | null;
  /** OpenID Connect Core §3.1.2.1: the value the ID token must echo. */
  nonce?: string;
  /** The query string as received, carried through the login and consent forms and validated again on return. */
  rawQuery: string;
}

/** The parameters of the authorization request that this server understands. */
export const AUTHORIZATION_PARAMS = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method', 'nonce'] as const;
