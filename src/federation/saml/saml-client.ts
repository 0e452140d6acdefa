import { SAML, ValidateInResponseTo, type CacheProvider, type SamlConfig } from '@node-saml/node-saml';
import type { IdpMetadata } from './idp-metadata.js';

/** How far our clock and the IdP's may disagree on NotBefore and NotOnOrAfter (SAML Core §1.3.3 leaves it to the relying party). */
export const CLOCK_SKEW_MS = 60 * 1000;

/** Where the IdP's administrator points one provider's SAML messages: derived from our issuer and the provider's id. */
export interface SpEndpoints {
  entityId: string;
  acs: string;
  slo: string;
}

export function spEndpoints(issuer: string, idp: string): SpEndpoints {
  const base = `${issuer}/federation/${idp}/saml`;
  return { entityId: `${base}/metadata`, acs: `${base}/acs`, slo: `${base}/slo` };
}

/**
 * node-saml asks whether an InResponseTo names a request we sent. Which browser a request was sent
 * to is known only from that browser's cookie, which the cross-site POST to the ACS does not carry
 * (SameSite=Lax): so here every ID is let through, the signed assertion's InResponseTo is kept with
 * the verified answer, and SamlSignIn.complete compares it with the pending request in the cookie.
 * Nothing is kept in this process (another instance may receive the answer).
 */
class DeferredRequestIds implements CacheProvider {
  async saveAsync(_key: string, value: string) {
    return { value, createdAt: Date.now() };
  }
  async getAsync(_key: string) {
    return new Date().toISOString();
  }
  async removeAsync(key: string | null) {
    return key;
  }
}

/**
 * node-saml for one upstream IdP, built per use from its current metadata (cheap: no I/O, nothing
 * kept): our entity ID, ACS and audience, the IdP's certificates, and the checks we ask of it.
 */
export function samlClient(sp: SpEndpoints, idp: IdpMetadata, signing: { privateKey: string; publicCert: string } | null, extra: Partial<SamlConfig> = {}): SAML {
  return new SAML({
    issuer: sp.entityId,
    callbackUrl: sp.acs,
    entryPoint: idp.singleSignOn.location,
    idpCert: idp.signingCertificates,
    idpIssuer: idp.entityId,
    // SAML Core §2.5.1.4: the assertion is for us alone.
    audience: sp.entityId,
    // Either signature will do, but one there must be: node-saml checks the assertion's whenever the Response is not signed.
    wantAuthnResponseSigned: false,
    wantAssertionsSigned: false,
    acceptedClockSkewMs: CLOCK_SKEW_MS,
    // A Response without InResponseTo (IdP-initiated) is refused; whose request it answers is decided at /complete.
    validateInResponseTo: ValidateInResponseTo.always,
    cacheProvider: new DeferredRequestIds(),
    // No NameIDPolicy Format and no RequestedAuthnContext: ADFS refuses a format it has no rule for, and a
    // requested class would stop an IdP from stepping up; the IdP's own choice is read from the assertion.
    identifierFormat: null,
    disableRequestedAuthnContext: true,
    signatureAlgorithm: 'sha256',
    ...(signing ? { privateKey: signing.privateKey, publicCert: signing.publicCert } : {}),
    ...extra,
  });
}
