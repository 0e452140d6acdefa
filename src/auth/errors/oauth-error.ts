import { ResponseMode } from '../../common/oauth.constants.js';

/**
 * OAuth 2.0 errors. Each subclass knows its RFC code, its HTTP status and whether it may be sent
 * back to the client's redirect URI (RFC 6749 §4.1.2.1) or must be shown to the user instead.
 * Instances are never mutated after construction (fosite errors.go): a different description is a new error.
 */
export abstract class OAuthError extends Error {
  abstract readonly error: string;
  abstract readonly status: number;
  /** May this error be delivered to the client's redirect URI? */
  readonly redirectable: boolean = true;

  constructor(readonly description: string) {
    super(description);
    this.name = new.target.name;
  }
}

/** RFC 6749 §4.1.2.1, §5.2: missing, repeated or malformed parameter. */
export class InvalidRequestError extends OAuthError {
  readonly error = 'invalid_request';
  readonly status = 400;
}

/** RFC 6749 §5.2: client authentication failed. 401, with a Basic challenge (RFC 6749 §5.2, RFC 7617) unless `basicChallenge` is false. */
export class InvalidClientError extends OAuthError {
  readonly error = 'invalid_client';
  readonly status = 401;
  override readonly redirectable = false;
  /** A client that authenticated with a client assertion is not invited to try HTTP Basic (RFC 7523 §3.2). */
  readonly basicChallenge: boolean = true;
}

/** RFC 7523 §3.2: the client assertion is refused; invalid_client without a Basic challenge. */
export class InvalidClientAssertionError extends InvalidClientError {
  override readonly basicChallenge = false;
}

/** RFC 6749 §5.2: the code or refresh token is invalid, expired, revoked, or bound to someone else. */
export class InvalidGrantError extends OAuthError {
  readonly error = 'invalid_grant';
  readonly status = 400;
}

/** RFC 6749 §4.1.2.1, §5.2: the client may not use this grant or response type. */
export class UnauthorizedClientError extends OAuthError {
  readonly error = 'unauthorized_client';
  readonly status = 400;
}

/** RFC 6749 §5.2. */
export class UnsupportedGrantTypeError extends OAuthError {
  readonly error = 'unsupported_grant_type';
  readonly status = 400;
}

/** RFC 6749 §4.1.2.1. */
export class UnsupportedResponseTypeError extends OAuthError {
  readonly error = 'unsupported_response_type';
  readonly status = 400;
}

/** RFC 6749 §4.1.2.1, §5.2. */
export class InvalidScopeError extends OAuthError {
  readonly error = 'invalid_scope';
  readonly status = 400;
}

/** RFC 9449 §5: the DPoP proof sent to the token endpoint is missing, malformed or does not hold. */
export class InvalidDpopProofError extends OAuthError {
  readonly error = 'invalid_dpop_proof';
  readonly status = 400;
}

/** RFC 9449 §8: the proof must carry the server's current nonce, sent in the DPoP-Nonce header. */
export class UseDpopNonceError extends OAuthError {
  readonly error = 'use_dpop_nonce';
  readonly status = 400;
}

/** RFC 8707 §2: a resource indicator that is malformed, unknown, or wider than what was granted. */
export class InvalidTargetError extends OAuthError {
  readonly error = 'invalid_target';
  readonly status = 400;
}

/** RFC 6749 §4.1.2.1: the resource owner refused. */
export class AccessDeniedError extends OAuthError {
  readonly error = 'access_denied';
  readonly status = 403;
}

/** RFC 8628 §3.5: the person has not yet approved or denied the device's request; poll again after the interval. */
export class AuthorizationPendingError extends OAuthError {
  readonly error = 'authorization_pending';
  readonly status = 400;
}

/** RFC 8628 §3.5: polled faster than the interval; the interval is now 5 seconds longer. */
export class SlowDownError extends OAuthError {
  readonly error = 'slow_down';
  readonly status = 400;
}

/** RFC 8628 §3.5: the device_code has expired; the device may start again with a new one. */
export class ExpiredTokenError extends OAuthError {
  readonly error = 'expired_token';
  readonly status = 400;
}

/** RFC 8628 §3.5: the person denied the device's request; answered at the token endpoint, so 400 as every §5.2 error. */
export class DeviceAccessDeniedError extends OAuthError {
  readonly error = 'access_denied';
  readonly status = 400;
}

/** OpenID Connect Core §3.1.2.6: prompt=none, and nobody is signed in (or not recently enough). */
export class LoginRequiredError extends OAuthError {
  readonly error = 'login_required';
  readonly status = 400;
}

/** Core §3.1.2.6: prompt=none, and going on needs a page (here: a second factor or its enrolment for the acr asked). */
export class InteractionRequiredError extends OAuthError {
  readonly error = 'interaction_required';
  readonly status = 400;
}

/** Core §3.1.2.6: prompt=none, and the person has not consented to this scope for this client. */
export class ConsentRequiredError extends OAuthError {
  readonly error = 'consent_required';
  readonly status = 400;
}

/** Core §3.1.2.6, §6.1: a request object (the request parameter), which this server does not support. */
export class RequestNotSupportedError extends OAuthError {
  readonly error = 'request_not_supported';
  readonly status = 400;
}

/** Core §3.1.2.6, §6.2: a request object by reference (request_uri naming a URL), which this server does not fetch. */
export class RequestUriNotSupportedError extends OAuthError {
  readonly error = 'request_uri_not_supported';
  readonly status = 400;
}

/**
 * The authorization request names no known client, or a redirect URI that is not registered for it.
 * RFC 6749 §4.1.2.1: the user must be told, and must not be redirected anywhere.
 */
export class UnverifiedClientOrRedirectError extends OAuthError {
  readonly status = 400;
  override readonly redirectable = false;

  constructor(
    /** invalid_request_uri: a pushed request's request_uri that is unknown, foreign, used or expired (RFC 9101 §6.2, RFC 9126 §4). */
    readonly error: 'invalid_client' | 'invalid_request' | 'invalid_request_uri',
    description: string,
  ) {
    super(description);
  }
}

/**
 * An error to deliver at the client's verified redirect URI, with the request's state (RFC 6749
 * §4.1.2.1) and our issuer (RFC 9207 §2). Thrown only after client and redirect URI are verified.
 */
export class AuthorizationRedirectError extends Error {
  constructor(
    readonly oauthError: OAuthError,
    readonly redirectUri: string,
    readonly state: string | undefined,
    /** RFC 6749 §4.2.2.1: errors of the implicit flow go in the fragment; form_post ones are posted. */
    readonly responseMode: ResponseMode = ResponseMode.Query,
  ) {
    super(oauthError.description);
    this.name = 'AuthorizationRedirectError';
  }
}
