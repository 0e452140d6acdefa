import type { Client } from '../../clients/client.entity.js';
import type { ResponseMode, ResponseType } from '../../common/oauth.constants.js';
import type { Acr } from '../../common/authentication-context.js';

/** A validated authorization request (RFC 6749 §4.1.1 with RFC 7636 §4.3). */
export interface AuthorizationRequest {
  client: Client;
  /** `code`, or `token` or `id_token` for a client registered for the implicit grant (RFC 6749 §4.2.1, Core §3.2.2.1). */
  responseType: ResponseType;
  /** Where the response parameters go: the query for codes, the fragment for tokens (RFC 6749 §4.2.2), or posted (form_post). */
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
  /** Core §3.1.2.1 prompt: none, login, consent, select_account (none alone). */
  prompt: ReadonlySet<Prompt>;
  /** Core §3.1.2.1 max_age: seconds since the sign-in after which the person signs in again. */
  maxAge?: number;
  /** Core §3.1.2.1 acr_values: the levels the client asks for (authentication-context.ts); any of them answers. */
  acrValues?: Acr[];
  /** Core §3.1.2.1 login_hint: pre-fills the login form's username. */
  loginHint?: string;
  /** Core §3.1.2.1 id_token_hint: an ID token we issued, naming whom the client expects. */
  idTokenHint?: string;
  /** idp_hint (a Latchkey parameter, Keycloak's kc_idp_hint): sign in at this upstream identity provider without the choice (issue 45). */
  idpHint?: string;
  /** The query string as received, carried through the login and consent forms and validated again on return. */
  rawQuery: string;
  /** RFC 9449 §10: the code is redeemed only with a DPoP proof made with the key of this thumbprint. */
  dpopJkt?: string;
  /** RFC 8707 §2.1: the resources the token will be restricted to; undefined when the request names none. */
  resources?: string[];
  /** The pushed request (RFC 9126) these parameters came from, used up by the authorization response. */
  pushedRequestId?: string;
}

/** OpenID Connect Core §3.1.2.1 prompt values. */
export const Prompt = { None: 'none', Login: 'login', Consent: 'consent', SelectAccount: 'select_account' } as const;
export type Prompt = (typeof Prompt)[keyof typeof Prompt];

/**
 * The parameters of the authorization request that this server understands; any other is ignored
 * (RFC 6749 §3.1, Core §3.1.2.1). ui_locales is read so that a repeated one is refused like the
 * others, and otherwise has no effect: the pages exist in English only.
 */
export const AUTHORIZATION_PARAMS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
  'nonce',
  'prompt',
  'max_age',
  // Core §3.1.2.1: the authentication context class references asked for (issue 33).
  'acr_values',
  'login_hint',
  'id_token_hint',
  // Issue 45: the upstream identity provider to sign in with, skipping the sign-in page's choice.
  'idp_hint',
  'ui_locales',
  // RFC 9449 §10: the thumbprint of the DPoP key the code is bound to.
  'dpop_jkt',
  // OAuth 2.0 Multiple Response Type Encoding Practices §2.1: the response type's default, or form_post (Form Post Response Mode §2).
  'response_mode',
] as const;
