import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { InteractionOutcome } from '../../auth/interaction/interaction-responder.js';
import { Pages } from '../../auth/interaction/pages.js';
import { Clock } from '../../common/clock.js';
import { randomBase64url } from '../../common/random.js';
import { constantTimeEqual, hashSecret } from '../../common/secrets.js';
import { UPSTREAM_PROTOCOL, type SamlSettings, type UpstreamProvider } from '../../identity-providers/identity-provider-settings.js';
import { IdentityProvidersService } from '../../identity-providers/identity-providers.service.js';
import { JtiUseStore } from '../../replay/jti-use.store.js';
import { UpstreamFailure } from '../upstream-failure.js';
import type { UpstreamIdentity } from '../upstream-identity.js';
import { UpstreamSignIn } from '../upstream-sign-in.service.js';
import { SamlHandoffStore } from './saml-handoff.store.js';
import { SamlServiceProvider } from './saml-service-provider.js';

/** How long a verified answer waits at the ACS for its browser's GET (which follows at once). */
const HANDOFF_TTL_MS = 2 * 60 * 1000;

/** What the IdP's HTTP-POST binding posts to the ACS (SAML Bindings §3.5.4). */
export interface AcsForm {
  SAMLResponse?: unknown;
  RelayState?: unknown;
}

type SamlProvider = UpstreamProvider & { settings: SamlSettings };

/**
 * Our half of SAML Web Browser SSO's answer (SAML Profiles §4.1.4), in two steps because the
 * answer arrives as a cross-site POST, which carries no SameSite=Lax cookie:
 * 1. POST /federation/<idp>/saml/acs checks the response (SamlServiceProvider.verify), records its
 *    assertion ID as used on every instance (§4.1.4.5), keeps the verified identity under a random
 *    handle in the database and redirects to
 * 2. GET /federation/<idp>/saml/complete?handle=…, a top-level navigation that brings the cookie:
 *    the handle is taken once, and the answer counts only when its InResponseTo is the request ID
 *    this browser's pending sign-in holds (login CSRF: a response obtained by someone else, or
 *    for another browser, signs nobody in here). Then UpstreamSignIn signs the person in.
 */
@Injectable()
export class SamlSignIn {
  constructor(
    private readonly providers: IdentityProvidersService,
    private readonly serviceProvider: SamlServiceProvider,
    private readonly handoffs: SamlHandoffStore,
    private readonly replay: JtiUseStore,
    private readonly upstream: UpstreamSignIn,
    private readonly pages: Pages,
    private readonly clock: Clock,
  ) {}

  /** POST /federation/:idp/saml/acs. */
  async acs(idpId: string, form: AcsForm): Promise<InteractionOutcome> {
    const provider = await this.samlProvider(idpId);
    if (!provider) return this.unknown();
    try {
      if (typeof form.SAMLResponse !== 'string' || form.SAMLResponse === '') throw new UpstreamFailure(provider, 'invalid_answer', 'the POST carried no SAMLResponse');
      const { facts, identity } = await this.serviceProvider.verify(provider, provider.settings, form.SAMLResponse);
      // SAML Profiles §4.1.4.5: a bearer assertion is used once, on whichever instance it reaches first.
      if (!(await this.replay.use('saml_assertion', facts.issuer, facts.id, facts.acceptableUntil))) {
        throw new UpstreamFailure(provider, 'invalid_answer', `assertion ${facts.id.slice(0, 80)} was accepted before (replay)`);
      }
      const handle = randomBase64url(32);
      const now = this.clock.now();
      await this.handoffs.insert({ handleHash: hashSecret(handle), idpId: provider.id, inResponseTo: facts.inResponseTo, identity: JSON.stringify(identity), expiresAt: new Date(now.getTime() + HANDOFF_TTL_MS) }, now);
      // 303: the browser follows with GET (RFC 9110 §15.4.4), which carries the Lax cookie.
      return { kind: 'redirect', status: 303, location: `/federation/${provider.id}/saml/complete?handle=${handle}` };
    } catch (error) {
      return this.upstream.failed(provider, error, undefined);
    }
  }

  /** GET /federation/:idp/saml/complete. */
  async complete(request: FastifyRequest, idpId: string, query: { handle?: unknown }): Promise<InteractionOutcome> {
    const provider = await this.samlProvider(idpId);
    if (!provider) return this.unknown();
    const now = this.clock.now();
    // Taken out of the cookie first, whatever follows: an answer is tried once.
    const pending = this.upstream.takePending(request, provider.id);
    try {
      const handoff = typeof query.handle === 'string' && query.handle.length <= 64 ? await this.handoffs.take(hashSecret(query.handle), provider.id, now) : null;
      if (!handoff) throw new UpstreamFailure(provider, 'expired', 'no verified answer under this handle (already used, expired, or never)');
      if (pending?.requestId === undefined) throw new UpstreamFailure(provider, 'expired', 'no SAML sign-in with this provider is pending in this browser');
      // SAML Profiles §4.1.4.3: InResponseTo is our request's ID; here, the request this browser sent.
      if (!constantTimeEqual(handoff.inResponseTo, pending.requestId)) throw new UpstreamFailure(provider, 'invalid_answer', 'the response answers a request this browser did not send');
      return await this.upstream.complete(request, provider, JSON.parse(handoff.identity) as UpstreamIdentity, pending);
    } catch (error) {
      return this.upstream.failed(provider, error, pending?.returnTo);
    }
  }

  /** GET /federation/:idp/saml/metadata: our SP metadata for the IdP's administrator, also while the provider is disabled (set up first, enabled once the IdP trusts us). */
  async metadata(idpId: string): Promise<{ xml: string } | InteractionOutcome> {
    const provider = await this.samlProvider(idpId, { enabledOnly: false });
    if (!provider) return this.unknown();
    try {
      return { xml: this.serviceProvider.spMetadata(provider, provider.settings) };
    } catch (error) {
      return this.upstream.failed(provider, error, undefined);
    }
  }

  private async samlProvider(idpId: string, options: { enabledOnly: boolean } = { enabledOnly: true }): Promise<SamlProvider | null> {
    const provider = options.enabledOnly ? await this.providers.findEnabled(idpId) : await this.providers.find(idpId);
    return provider?.settings.protocol === UPSTREAM_PROTOCOL.Saml ? (provider as SamlProvider) : null;
  }

  private unknown(): InteractionOutcome {
    return this.pages.error(404, 'invalid_request', 'There is no such way to sign in here.', { retryUrl: '/login' });
  }
}
