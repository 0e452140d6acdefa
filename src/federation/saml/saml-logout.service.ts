import { Injectable, Logger } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AuditService } from '../../audit/audit.service.js';
import type { InteractionOutcome } from '../../auth/interaction/interaction-responder.js';
import { Pages } from '../../auth/interaction/pages.js';
import { Clock } from '../../common/clock.js';
import { UPSTREAM_PROTOCOL, type SamlSettings, type UpstreamProvider } from '../../identity-providers/identity-provider-settings.js';
import { IdentityProvidersService } from '../../identity-providers/identity-providers.service.js';
import { JtiUseStore } from '../../replay/jti-use.store.js';
import { SessionsService } from '../../sessions/sessions.service.js';
import { UpstreamFailure } from '../upstream-failure.js';
import { UpstreamSessionStore } from '../../identity-providers/upstream-session.store.js';
import { UpstreamSignOut } from '../upstream-sign-out.js';
import { CLOCK_SKEW_MS } from './saml-client.js';
import { SamlSingleLogout } from './saml-single-logout.js';

/** How long a LogoutRequest's ID is remembered as used (an IdP sends it as the person signs out). */
const LOGOUT_REQUEST_REPLAY_MS = 10 * 60 * 1000;

/** What arrives at /federation/<idp>/saml/slo, by the HTTP-Redirect or the HTTP-POST binding (SAML Bindings §3.4.4, §3.5.4). */
export interface SloMessage {
  SAMLRequest?: unknown;
  SAMLResponse?: unknown;
  RelayState?: unknown;
  SigAlg?: unknown;
  Signature?: unknown;
}

/**
 * Our Single Logout endpoint (SAML Profiles §4.4), by the HTTP-Redirect binding (a GET, which
 * carries the session cookie) and the HTTP-POST binding (Okta answers by POST: a cross-site POST,
 * which carries no SameSite=Lax cookie):
 * - the IdP's LogoutResponse to ours: the sign-out here that sent the browser upstream continues
 *   where it was going (UpstreamSignOut, by the RelayState it kept in the cookie, never a URL from
 *   the message); a POST first bounces to that GET, where the cookie comes along;
 * - the IdP's own LogoutRequest (the person signed out at the IdP or at another of its SPs): once
 *   verified, and used once on every instance, the sessions its sign-in started here end (by its
 *   SessionIndex, else by NameID; no cookie needed), and the browser goes back with our LogoutResponse.
 */
@Injectable()
export class SamlLogoutEndpoint {
  private readonly logger = new Logger('Federation');

  constructor(
    private readonly providers: IdentityProvidersService,
    private readonly singleLogout: SamlSingleLogout,
    private readonly signOut: UpstreamSignOut,
    private readonly upstreamSessions: UpstreamSessionStore,
    private readonly sessions: SessionsService,
    private readonly replay: JtiUseStore,
    private readonly audit: AuditService,
    private readonly pages: Pages,
    private readonly clock: Clock,
  ) {}

  /** GET /federation/:idp/saml/slo (HTTP-Redirect binding). */
  async redirected(request: FastifyRequest, idpId: string, query: SloMessage): Promise<InteractionOutcome> {
    return this.receive(idpId, query, request.url.slice(request.url.indexOf('?') + 1), (provider) => this.signOut.returned(request, provider.id, { state: query.RelayState }));
  }

  /** POST /federation/:idp/saml/slo (HTTP-POST binding). */
  async posted(idpId: string, form: SloMessage): Promise<InteractionOutcome> {
    const state = typeof form.RelayState === 'string' ? `?${new URLSearchParams({ state: form.RelayState })}` : '';
    return this.receive(idpId, form, null, (provider) => ({ kind: 'redirect', status: 303, location: `${this.signOut.signedOutUrl(provider.id)}${state}` }));
  }

  private async receive(idpId: string, message: SloMessage, rawQuery: string | null, returned: (provider: UpstreamProvider) => InteractionOutcome): Promise<InteractionOutcome> {
    // A disabled provider's logout still ends the sessions it started.
    const provider = await this.providers.find(idpId);
    if (!provider || provider.settings.protocol !== UPSTREAM_PROTOCOL.Saml) return this.pages.error(404, 'invalid_request', 'There is no such way to sign in here.', { retryUrl: '/' });
    if (typeof message.SAMLResponse === 'string') return returned(provider);
    if (typeof message.SAMLRequest !== 'string') return this.pages.error(400, 'invalid_request', 'This is where an identity provider sends its Single Logout messages.', { retryUrl: '/' });
    try {
      return await this.logoutRequest(provider as UpstreamProvider & { settings: SamlSettings }, message, rawQuery);
    } catch (error) {
      if (!(error instanceof UpstreamFailure)) throw error;
      this.logger.warn(`SAML LogoutRequest refused: ${error.message}`);
      return this.pages.error(400, 'invalid_request', `The sign-out request from ${provider.displayName} could not be verified.`, { retryUrl: '/' });
    }
  }

  private async logoutRequest(provider: UpstreamProvider & { settings: SamlSettings }, message: SloMessage, rawQuery: string | null): Promise<InteractionOutcome> {
    const logout = await this.singleLogout.verifyLogoutRequest(provider, provider.settings, message as Record<string, unknown>, rawQuery);
    const until = new Date(this.clock.now().getTime() + LOGOUT_REQUEST_REPLAY_MS + CLOCK_SKEW_MS);
    if (!(await this.replay.use('saml_assertion', logout.issuer, `LogoutRequest ${logout.id}`, until))) throw new UpstreamFailure(provider, 'invalid_answer', 'this LogoutRequest was used already');
    // SAML Core §3.7.1: a SessionIndex names the sessions; without one, every session of the NameID.
    const match = logout.sessionIndex !== null ? { upstreamSid: logout.sessionIndex } : provider.settings.subjectAttribute === null ? { subject: logout.nameId } : null;
    const ended = match ? await this.sessions.endRows(await this.upstreamSessions.sessionsOf(provider.id, match)) : 0;
    await this.audit.record({ actor: `idp:${provider.id}`, action: 'upstream.single_logout', subject: `idp:${provider.id}`, details: { sessions_ended: ended, by: logout.sessionIndex !== null ? 'session_index' : 'name_id' } });
    const relayState = typeof message.RelayState === 'string' ? message.RelayState : '';
    const location = await this.singleLogout.logoutResponseLocation(provider, provider.settings, logout.request, relayState);
    return { kind: 'redirect', status: 303, location: location ?? '/' };
  }
}
