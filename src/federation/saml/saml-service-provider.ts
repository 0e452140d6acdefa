import { Inject, Injectable } from '@nestjs/common';
import { generateServiceProviderMetadata, SamlStatusError, type Profile, type SAML, type SamlConfig } from '@node-saml/node-saml';
import { randomBytes } from 'node:crypto';
import { Clock } from '../../common/clock.js';
import { appConfig, type AppConfig } from '../../config/app.config.js';
import type { SamlSettings, UpstreamProvider } from '../../identity-providers/identity-provider-settings.js';
import type { PendingUpstreamSignIn } from '../../identity-providers/pending-upstream.js';
import type { UpstreamIdentity } from '../upstream-identity.js';
import { UpstreamFailure } from '../upstream-failure.js';
import { IdpMetadataCache } from './idp-metadata.cache.js';
import { IdpMetadataError, type IdpMetadata } from './idp-metadata.js';
import { CLOCK_SKEW_MS, samlClient, spEndpoints, type SpEndpoints } from './saml-client.js';
import { identityOf } from './saml-identity.js';
import { NAMEID_FORMAT, SAML_BINDING } from './saml-names.js';
import { readResponseEnvelope } from './saml-response-envelope.js';
import { AssertionRefused, checkSignedAssertion, type SignedAssertionFacts } from './signed-assertion.js';
import { spSigningOptions } from './sp-signing-key.js';

/** A response that passed every check of SAML Profiles §4.1.4.3 but the browser binding, which SamlSignIn makes. */
export interface VerifiedSamlResponse {
  facts: SignedAssertionFacts;
  identity: UpstreamIdentity;
}

/** The AuthnRequest to send: a redirect to `location` (HTTP-Redirect binding), or, with `form`, a form the browser posts there (HTTP-POST binding). */
export interface AuthnRequestMessage {
  location: string;
  form?: Record<string, string>;
  pending: Required<Pick<PendingUpstreamSignIn, 'requestId'>>;
}

/**
 * Our SAML 2.0 service provider, one per upstream SAML IdP (SP-initiated Web Browser SSO, SAML
 * Profiles §4.1), on node-saml: it builds our AuthnRequests and our metadata, and checks responses
 * (the XML signature, by xml-crypto, against the IdP's metadata certificates only, with node-saml's
 * defences against signature wrapping; Audience; the Conditions' validity window), adding what
 * node-saml leaves out (signed-assertion.ts: issuer, bearer Recipient and InResponseTo inside the
 * signature; saml-response-envelope.ts: no DTD, Destination).
 */
@Injectable()
export class SamlServiceProvider {
  private readonly issuer: string;

  constructor(
    private readonly metadata: IdpMetadataCache,
    private readonly clock: Clock,
    @Inject(appConfig.KEY) app: AppConfig,
  ) {
    this.issuer = app.issuer;
  }

  endpoints(idp: string): SpEndpoints {
    return spEndpoints(this.issuer, idp);
  }

  /**
   * A new AuthnRequest (SAML Profiles §4.1.4.1), and the request ID the answer's InResponseTo must
   * name (kept in the browser's encrypted cookie, as PendingUpstreamSignIn.requestId). SAML has no
   * max_age: when the request here bounds the sign-in's age, or asks for a new one (prompt=login),
   * the IdP is asked to authenticate the person again (ForceAuthn, SAML Core §3.4.1).
   */
  async start(provider: UpstreamProvider, settings: SamlSettings, options: { forceLogin: boolean; maxAge?: number }): Promise<AuthnRequestMessage> {
    const idp = await this.idpMetadata(provider, settings);
    const requestId = `_${randomBytes(20).toString('hex')}`;
    const post = idp.singleSignOn.binding === 'post';
    const forceAuthn = options.forceLogin || options.maxAge !== undefined;
    // SAML Bindings §3.5.4: the HTTP-POST binding carries the request base64-encoded, not deflated.
    const saml = this.client(provider, settings, idp, { forceAuthn, generateUniqueId: () => requestId, skipRequestCompression: post });
    if (!post) return { pending: { requestId }, location: await saml.getAuthorizeUrlAsync('', undefined, {}) };
    const message = (await saml.getAuthorizeMessageAsync('', undefined, {})) as Record<string, string>;
    return { pending: { requestId }, location: idp.singleSignOn.location, form: Object.fromEntries(Object.entries(message).filter(([, value]) => value !== '')) };
  }

  /** Every check of the response but the browser binding; an UpstreamFailure naming the first that failed. */
  async verify(provider: UpstreamProvider, settings: SamlSettings, samlResponse: string): Promise<VerifiedSamlResponse> {
    const { acs } = this.endpoints(provider.id);
    try {
      readResponseEnvelope(samlResponse, acs);
    } catch (error) {
      throw new UpstreamFailure(provider, 'invalid_answer', (error as Error).message);
    }
    let idp = await this.idpMetadata(provider, settings);
    let profile: Profile;
    try {
      profile = await this.validate(provider, settings, idp, samlResponse);
    } catch (error) {
      if (!/signature/i.test((error as Error).message)) throw this.failure(provider, error);
      // Perhaps the IdP rolled its signing key: read the metadata again (at most once a minute) and try once more.
      idp = await this.idpMetadata(provider, settings, true);
      profile = await this.validate(provider, settings, idp, samlResponse).catch((again: unknown) => {
        throw this.failure(provider, again);
      });
    }
    try {
      const facts = checkSignedAssertion(profile.getAssertion?.(), { issuer: idp.entityId, acs, now: this.clock.now().getTime(), skewMs: CLOCK_SKEW_MS });
      // node-saml compared the confirmation's InResponseTo with the Response's; a Response without one answered no request.
      if (profile.inResponseTo !== facts.inResponseTo) throw new AssertionRefused('the Response answers another request than its assertion');
      return { facts, identity: identityOf(profile, facts, settings) };
    } catch (error) {
      throw this.failure(provider, error);
    }
  }

  /** Our metadata (SAML Metadata §2.4.4 SPSSODescriptor), for the IdP's administrator to import. */
  spMetadata(provider: UpstreamProvider, settings: SamlSettings): string {
    const { entityId, acs, slo } = this.endpoints(provider.id);
    const signing = spSigningOptions(provider, settings);
    const xml = generateServiceProviderMetadata({
      issuer: entityId,
      callbackUrl: acs,
      logoutCallbackUrl: slo,
      identifierFormat: NAMEID_FORMAT.Persistent,
      wantAssertionsSigned: true,
      ...(signing ? { privateKey: signing.privateKey, publicCerts: signing.publicCert, signatureAlgorithm: 'sha256' } : {}),
    });
    // Our Single Logout endpoint takes both bindings, HTTP-Redirect first (a GET, which carries the session cookie); node-saml writes HTTP-POST alone.
    return xml.replace(/( *)(<SingleLogoutService Binding=")urn:oasis:names:tc:SAML:2\.0:bindings:HTTP-POST("[^>]*\/>)/, `$1$2${SAML_BINDING.Redirect}$3\n$1$2${SAML_BINDING.Post}$3`);
  }

  async idpMetadata(provider: UpstreamProvider, settings: SamlSettings, refresh = false): Promise<IdpMetadata> {
    try {
      return await this.metadata.metadataOf(provider.id, settings, { refresh });
    } catch (error) {
      throw new UpstreamFailure(provider, settings.metadataUrl !== null ? 'unreachable' : 'misconfigured', `metadata: ${(error as Error).message}`);
    }
  }

  /** node-saml for this provider, with our SP's signing key when it has one. */
  client(provider: UpstreamProvider, settings: SamlSettings, idp: IdpMetadata, extra: Partial<SamlConfig> = {}): SAML {
    return samlClient(this.endpoints(provider.id), idp, spSigningOptions(provider, settings), extra);
  }

  /** What went wrong, as the UpstreamFailure the page and the audit show. */
  failure(provider: UpstreamProvider, error: unknown): UpstreamFailure {
    if (error instanceof UpstreamFailure) return error;
    if (error instanceof IdpMetadataError) return new UpstreamFailure(provider, 'misconfigured', error.message);
    if (error instanceof SamlStatusError) {
      const denied = /AuthnFailed|RequestDenied|NoPassive|UnknownPrincipal/.test(`${error.xmlStatus} ${error.message}`);
      return new UpstreamFailure(provider, denied ? 'denied' : 'upstream_error', error.message.slice(0, 300));
    }
    return new UpstreamFailure(provider, 'invalid_answer', error instanceof Error ? error.message.slice(0, 300) : String(error));
  }

  private async validate(provider: UpstreamProvider, settings: SamlSettings, idp: IdpMetadata, samlResponse: string): Promise<Profile> {
    const { profile } = await this.client(provider, settings, idp).validatePostResponseAsync({ SAMLResponse: samlResponse });
    if (!profile) throw new SamlStatusError('the IdP could not sign the person in without asking (NoPassive)', 'NoPassive');
    return profile;
  }
}
