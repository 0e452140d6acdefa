/**
 * DPoP (RFC 9449) as oauth4webapi does it, for the tests that drive the library unmodified.
 *
 * Latchkey asks for a server-provided nonce in DPoP proofs: the authorization server answers a
 * proof without one with use_dpop_nonce (RFC 9449 §8), a resource server with a use_dpop_nonce
 * challenge (§9), each with a DPoP-Nonce header. The library's DPoP handle remembers the nonce; the
 * retry is the caller's, as oauth4webapi documents it (DPoP(), isDPoPNonceError()): when a request
 * is rejected with an error for which isDPoPNonceError() is true, make it once more.
 */
import * as oauth from 'oauth4webapi';

/**
 * oauth4webapi's documented pattern for server-provided DPoP nonces (RFC 9449 §8 at the
 * authorization server, §9 at a resource server): `attempt`, and once more if it was refused
 * because the proof lacked the server's nonce (oauth.isDPoPNonceError); the DPoP handle then
 * carries the nonce it was handed. Any other error, or a second refusal, is the caller's.
 */
export async function withNonceRetry<T>(attempt: () => Promise<T>): Promise<T> {
  try {
    return await attempt();
  } catch (error) {
    if (oauth.isDPoPNonceError(error)) return attempt();
    throw error;
  }
}

// oauth4webapi's request and response steps of one endpoint, together under withNonceRetry (as
// openid-client's functions of the same names do them). `options` are the library's own: the DPoP
// handle (or none), allowInsecureRequests, customFetch.

/** The code redeemed at the token endpoint (RFC 6749 §4.1.3): authorizationCodeGrantRequest, processAuthorizationCodeResponse. */
export function authorizationCodeGrant(as: oauth.AuthorizationServer, client: oauth.Client, auth: oauth.ClientAuth, callback: URLSearchParams, redirectUri: string, verifier: string, options: oauth.TokenEndpointRequestOptions): Promise<oauth.TokenEndpointResponse> {
  return withNonceRetry(async () => oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, auth, callback, redirectUri, verifier, options)));
}

/** A refresh (RFC 6749 §6): refreshTokenGrantRequest, processRefreshTokenResponse. */
export function refreshTokenGrant(as: oauth.AuthorizationServer, client: oauth.Client, auth: oauth.ClientAuth, refreshToken: string, options: oauth.TokenEndpointRequestOptions): Promise<oauth.TokenEndpointResponse> {
  return withNonceRetry(async () => oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, auth, refreshToken, options)));
}

/** client_credentials (RFC 6749 §4.4): clientCredentialsGrantRequest, processClientCredentialsResponse. */
export function clientCredentialsGrant(as: oauth.AuthorizationServer, client: oauth.Client, auth: oauth.ClientAuth, parameters: URLSearchParams | Record<string, string> | string[][], options: oauth.ClientCredentialsGrantRequestOptions): Promise<oauth.TokenEndpointResponse> {
  return withNonceRetry(async () => oauth.processClientCredentialsResponse(as, client, await oauth.clientCredentialsGrantRequest(as, client, auth, parameters, options)));
}

/** A pushed authorization request (RFC 9126; with a DPoP handle, a proof goes with it, RFC 9449 §10.1): pushedAuthorizationRequest, processPushedAuthorizationResponse. */
export function pushedAuthorization(as: oauth.AuthorizationServer, client: oauth.Client, auth: oauth.ClientAuth, parameters: URLSearchParams | Record<string, string> | string[][], options: oauth.PushedAuthorizationRequestOptions): Promise<oauth.PushedAuthorizationResponse> {
  return withNonceRetry(async () => oauth.processPushedAuthorizationResponse(as, client, await oauth.pushedAuthorizationRequest(as, client, auth, parameters, options)));
}

/** GET /api/v1/notes at `issuer` with `accessToken`: with a proof for this request and token when `options` carry a DPoP handle, as a bearer token when not. */
export function getNotes(issuer: string | URL, accessToken: string, options: oauth.ProtectedResourceRequestOptions): Promise<Response> {
  return withNonceRetry(() => oauth.protectedResourceRequest(accessToken, 'GET', new URL('/api/v1/notes', issuer), undefined, undefined, options));
}
