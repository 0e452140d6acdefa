import { ResponseMode } from '../../common/oauth.constants.js';
import { errorDescription } from '../../common/error-description.js';
import type { OAuthError } from '../errors/oauth-error.js';

/**
 * Adds response parameters to the client's redirect URI, keeping its own query (RFC 6749 §3.1.2),
 * with `iss` so that a client talking to several servers can tell who answered (RFC 9207 §2).
 * In the fragment mode (implicit grant, RFC 6749 §4.2.2) they form the fragment instead, encoded
 * as application/x-www-form-urlencoded (Appendix B); registered URIs never have a fragment of their own.
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

/** RFC 6749 §4.1.2: code and state. */
export function successRedirect(redirectUri: string, code: string, state: string | undefined, issuer: string): string {
  return redirectWith(redirectUri, { code, state, iss: issuer });
}

/** RFC 6749 §4.2.2: the access token in the fragment; never a refresh token (§4.2.2). */
export function implicitRedirect(redirectUri: string, token: { accessToken: string; tokenType: string; expiresIn: number; scope: string }, state: string | undefined, issuer: string): string {
  const params = { access_token: token.accessToken, token_type: token.tokenType, expires_in: String(token.expiresIn), scope: token.scope, state, iss: issuer };
  return redirectWith(redirectUri, params, ResponseMode.Fragment);
}

/** RFC 6749 §4.1.2.1 (query) and §4.2.2.1 (fragment): error, error_description and state. */
export function errorRedirect(redirectUri: string, error: OAuthError, state: string | undefined, issuer: string, mode: ResponseMode = ResponseMode.Query): string {
  return redirectWith(redirectUri, { error: error.error, error_description: errorDescription(error.description), state, iss: issuer }, mode);
}
