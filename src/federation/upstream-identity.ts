import type { AuthenticationMethod } from '../common/authentication-context.js';

/**
 * A person as an upstream provider vouched for them, after its protocol's checks passed: the ID
 * token's signature, issuer, audience, nonce and expiry (OpenID Connect Core §3.1.3.7), or the SAML
 * response's signature, audience, recipient, validity window, InResponseTo and one-time use
 * (SAML 2.0 Profiles §4.1.4.3). What is here is only what the upstream said; UpstreamSignIn decides
 * what it is worth (the provider's trust settings) and whom it signs in.
 */
export interface UpstreamIdentity {
  /** The stable subject at that provider: the `sub` claim, a persistent NameID or the configured attribute. */
  subject: string;
  /** Claims (OpenID Connect) or attributes (SAML, first value of each), read through the provider's mapping. */
  claims: Record<string, unknown>;
  /** The upstream's own authentication methods, as RFC 8176 values this server knows (empty when it said none). */
  amr: AuthenticationMethod[];
  /** For logout in both directions (UpstreamSession): the upstream's session id and what its logout needs back. */
  session: { upstreamSid: string | null; logoutHint: string | null };
}
