import type { OAuthError } from '../errors/oauth-error.js';

/**
 * Adds response parameters to the client's redirect URI, keeping its own query (RFC 6749 §3.1.2),
 * with `iss` so that a client talking to several servers can tell who answered (RFC 9207 §2).
 */
export function redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) url.searchParams.append(name, value);
  }
  return url.toString();
}

/** RFC 6749 §4.1.2: code and state. */
export function successRedirect(redirectUri: string, code: string, state: string | undefined, issuer: string): string {
  return redirectWith(redirectUri, { code, state, iss: issuer });
}

/** RFC 6749 §4.1.2.1: error, error_description and state. */
export function errorRedirect(redirectUri: string, error: OAuthError, state: string | undefined, issuer: string): string {
  return redirectWith(redirectUri, { error: error.error, error_description: error.description, state, iss: issuer });
}
