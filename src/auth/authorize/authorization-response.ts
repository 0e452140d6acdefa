import { ResponseMode } from '../../common/oauth.constants.js';
import { errorDescription } from '../../common/error-description.js';
import type { OAuthError } from '../errors/oauth-error.js';
import type { InteractionOutcome } from '../interaction/interaction-responder.js';
import type { Pages } from '../interaction/pages.js';

/** An authorization response (or error) on its way to the client: where, what, and how it travels. */
export interface AuthorizationResponse {
  redirectUri: string;
  params: Record<string, string | undefined>;
  mode: ResponseMode;
}

/**
 * Adds response parameters to the client's redirect URI, keeping its own query (RFC 6749 §3.1.2).
 * In the fragment mode (implicit grant, RFC 6749 §4.2.2) they form the fragment instead, encoded
 * as application/x-www-form-urlencoded (Appendix B); registered URIs never have a fragment of their own.
 * The form_post mode is no URL at all: see Pages.formPost.
 */
export function redirectWith(redirectUri: string, params: Record<string, string | undefined>, mode: ResponseMode = ResponseMode.Query): string {
  const url = new URL(redirectUri);
  const target = mode === ResponseMode.Fragment ? new URLSearchParams() : url.searchParams;
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) target.append(name, value);
  }
  if (mode === ResponseMode.Fragment) url.hash = target.toString();
  return url.toString();
}

/**
 * RFC 6749 §4.1.2: code and state, with `iss` so that a client talking to several servers can tell
 * who answered (RFC 9207 §2). In the query, or posted (Form Post Response Mode §2).
 */
export function codeResponse(redirectUri: string, code: string, state: string | undefined, issuer: string, mode: ResponseMode): AuthorizationResponse {
  return { redirectUri, params: { code, state, iss: issuer }, mode };
}

/** RFC 6749 §4.2.2: the access token in the fragment (or posted); never a refresh token (§4.2.2). */
export function implicitResponse(redirectUri: string, token: { accessToken: string; tokenType: string; expiresIn: number; scope: string }, state: string | undefined, issuer: string, mode: ResponseMode): AuthorizationResponse {
  return { redirectUri, params: { access_token: token.accessToken, token_type: token.tokenType, expires_in: String(token.expiresIn), scope: token.scope, state, iss: issuer }, mode };
}

/** OpenID Connect Core §3.2.2.5: the ID token alone, in the fragment or posted. */
export function idTokenResponse(redirectUri: string, idToken: string, state: string | undefined, issuer: string, mode: ResponseMode): AuthorizationResponse {
  return { redirectUri, params: { id_token: idToken, state, iss: issuer }, mode };
}

/** RFC 6749 §4.1.2.1 (query) and §4.2.2.1 (fragment), or posted: error, error_description and state. */
export function errorResponse(redirectUri: string, error: OAuthError, state: string | undefined, issuer: string, mode: ResponseMode = ResponseMode.Query): AuthorizationResponse {
  return { redirectUri, params: { error: error.error, error_description: errorDescription(error.description), state, iss: issuer }, mode };
}

/**
 * Sends the response the way its mode says: a redirect (302 after a GET, 303 after a form), or,
 * for form_post, the page whose form the browser posts to the redirect URI.
 */
export function deliver(response: AuthorizationResponse, status: 302 | 303, pages: Pages): InteractionOutcome {
  if (response.mode === ResponseMode.FormPost) return pages.formPost(response.redirectUri, response.params);
  return { kind: 'redirect', status, location: redirectWith(response.redirectUri, response.params, response.mode) };
}
