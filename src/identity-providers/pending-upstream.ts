/** How long a browser may take at the upstream before coming back (as long as an authorization code lives upstream, plus the person's typing). */
export const UPSTREAM_WAIT_MS = 10 * 60 * 1000;

/**
 * A sign-in that went upstream and has not come back (issue 45): what the answer must match. Kept
 * in the encrypted session cookie only (LoginSession; one at a time: starting another replaces it),
 * so that an answer is accepted only by the browser that asked for it (RFC 9700 §4.7: CSRF on the
 * redirect URI; SAML Profiles §4.1.4.3: InResponseTo), and only from the provider it was sent to
 * (RFC 9700 §4.4: mix-up).
 */
export interface PendingUpstreamSignIn {
  idp: string;
  /** OpenID Connect: RFC 6749 §10.12 state, Core §3.1.2.1 nonce, RFC 7636 code_verifier, and the max_age asked upstream. */
  state?: string;
  nonce?: string;
  codeVerifier?: string;
  maxAge?: number;
  /** SAML: the ID of our AuthnRequest, which the response's InResponseTo must name. */
  requestId?: string;
  /** Where the person goes once signed in here (login.service.ts safeReturnTo). */
  returnTo: string;
  /** When it went upstream, in epoch milliseconds. */
  at: number;
  /** The signed-in person who asked to link this upstream identity to their account (the explicit step); absent for a sign-in. */
  linkTo?: string;
}

/** A sign-out that went to an upstream's logout: the state it must bring back, and where to go then (ours, never from the query). */
export interface PendingUpstreamSignOut {
  idp: string;
  state: string;
  next: string;
  at: number;
}

/**
 * Which upstream sign-in a session comes from (issue 45), as LoginSession records it with the
 * session (UpstreamSession): the provider, the person's subject there, and what logout in both
 * directions needs. Carried through the second-factor step in the cookie when one is asked.
 */
export interface UpstreamSignInRecord {
  idp: string;
  subject: string;
  upstreamSid: string | null;
  logoutHint: string | null;
}
