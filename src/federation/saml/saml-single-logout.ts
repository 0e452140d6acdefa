import { Injectable } from '@nestjs/common';
import type { Profile } from '@node-saml/node-saml';
import type { SamlSettings, UpstreamProvider } from '../../identity-providers/identity-provider-settings.js';
import { UpstreamFailure } from '../upstream-failure.js';
import { parseLogoutHint } from './saml-identity.js';
import { NAMEID_FORMAT } from './saml-names.js';
import { SamlServiceProvider } from './saml-service-provider.js';
import { AssertionRefused } from './signed-assertion.js';

/** What an IdP's LogoutRequest names, once verified. */
export interface VerifiedLogoutRequest {
  id: string;
  issuer: string;
  nameId: string;
  sessionIndex: string | null;
  /** node-saml's reading of it, which our LogoutResponse answers. */
  request: Profile;
}

/** SAML Single Logout (SAML Profiles §4.4) by the HTTP-Redirect binding, in both directions. */
@Injectable()
export class SamlSingleLogout {
  constructor(private readonly serviceProvider: SamlServiceProvider) {}

  /**
   * SAML Profiles §4.4.3.1: where to send the browser to end the person's session at the IdP, a
   * LogoutRequest (signed when our SP has a signing key; ADFS, Okta, Shibboleth and SimpleSAMLphp
   * require it, §4.4.4.1) naming the NameID and SessionIndex the assertion gave (`logoutHint`,
   * UpstreamIdentity.session's), with `relayState` for the way back (SAML Bindings §3.4.3); null
   * when the IdP has no Single Logout endpoint for the binding, or nothing names the session.
   */
  async logoutLocation(provider: UpstreamProvider, settings: SamlSettings, logoutHint: string | null, relayState = ''): Promise<string | null> {
    const hint = parseLogoutHint(logoutHint);
    if (!hint) return null;
    const idp = await this.serviceProvider.idpMetadata(provider, settings).catch(() => null);
    if (!idp?.singleLogout) return null;
    const saml = this.serviceProvider.client(provider, settings, idp, { logoutUrl: idp.singleLogout });
    const user = { issuer: idp.entityId, nameID: hint.nameId, nameIDFormat: hint.nameIdFormat ?? NAMEID_FORMAT.Unspecified, nameQualifier: hint.nameQualifier, spNameQualifier: hint.spNameQualifier, sessionIndex: hint.sessionIndex ?? undefined };
    return saml.getLogoutUrlAsync(user, relayState, {});
  }

  /**
   * The IdP's own LogoutRequest (SAML Profiles §4.4.4.1), by the HTTP-Redirect binding (`rawQuery`:
   * the signature covers the query as sent, SAML Bindings §3.4.4.1) or the HTTP-POST binding (an
   * enveloped XML signature): signed by a key of its metadata (required here, as the profile
   * requires it), issued by it, not expired.
   */
  async verifyLogoutRequest(provider: UpstreamProvider, settings: SamlSettings, message: Record<string, unknown>, rawQuery: string | null): Promise<VerifiedLogoutRequest> {
    const redirect = rawQuery !== null;
    if (typeof message.SAMLRequest !== 'string' || (redirect && (typeof message.Signature !== 'string' || typeof message.SigAlg !== 'string'))) {
      throw new UpstreamFailure(provider, 'invalid_answer', 'the LogoutRequest is not signed (SAML Profiles §4.4.4.1)');
    }
    const idp = await this.serviceProvider.idpMetadata(provider, settings);
    try {
      const saml = this.serviceProvider.client(provider, settings, idp);
      // node-saml's POST path checks the enveloped signature of the document element (and refuses a request without one).
      const { profile } = redirect ? await saml.validateRedirectAsync(message as Record<string, string>, rawQuery) : await saml.validatePostRequestAsync(message as Record<string, string>);
      if (!profile?.ID || profile.issuer !== idp.entityId || !profile.nameID) throw new AssertionRefused('not a LogoutRequest from this IdP');
      return { id: profile.ID, issuer: idp.entityId, nameId: profile.nameID, sessionIndex: typeof profile.sessionIndex === 'string' ? profile.sessionIndex : null, request: profile };
    } catch (error) {
      throw this.serviceProvider.failure(provider, error);
    }
  }

  /** SAML Profiles §4.4.3.4: our LogoutResponse to the IdP's LogoutRequest, by the HTTP-Redirect binding; null when the IdP has no endpoint for it. */
  async logoutResponseLocation(provider: UpstreamProvider, settings: SamlSettings, request: Profile, relayState: string): Promise<string | null> {
    const idp = await this.serviceProvider.idpMetadata(provider, settings);
    if (!idp.singleLogout) return null;
    return this.serviceProvider.client(provider, settings, idp, { logoutUrl: idp.singleLogout }).getLogoutResponseUrlAsync(request, relayState, {}, true);
  }
}
