import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { randomBytes } from 'node:crypto';
import type { InteractionOutcome } from '../auth/interaction/interaction-responder.js';
import { LoginSession } from '../auth/interaction/login-session.js';
import { Clock } from '../common/clock.js';
import { appConfig, type AppConfig } from '../config/app.config.js';
import { UPSTREAM_PROTOCOL } from '../identity-providers/identity-provider-settings.js';
import { IdentityProvidersService } from '../identity-providers/identity-providers.service.js';
import { SignOutRedirects } from '../identity-providers/sign-out-redirects.js';
import { UpstreamOpenIdConnect } from './oidc/upstream-openid-connect.js';
import { SamlSingleLogout } from './saml/saml-single-logout.js';
import { UpstreamSessionStore } from '../identity-providers/upstream-session.store.js';

/** How long the upstream's logout may take before its return is no longer recognised. */
const SIGN_OUT_WAIT_MS = 10 * 60 * 1000;

/**
 * Sign-out here, propagated upstream (issue 45): a session that an upstream provider signed in
 * sends the browser to the provider's logout (OpenID Connect RP-Initiated Logout 1.0 §2, with the
 * ID token as id_token_hint and a state), which returns to /federation/:idp/signed-out; from there
 * the browser goes where the sign-out here was going. `next` is ours (a registered
 * post_logout_redirect_uri or a page here), kept in the encrypted cookie, never taken from the query.
 */
@Injectable()
export class UpstreamSignOut implements OnModuleInit {
  private readonly issuer: string;

  constructor(
    private readonly redirects: SignOutRedirects,
    private readonly upstreamSessions: UpstreamSessionStore,
    private readonly providers: IdentityProvidersService,
    private readonly openIdConnect: UpstreamOpenIdConnect,
    private readonly saml: SamlSingleLogout,
    private readonly session: LoginSession,
    private readonly clock: Clock,
    @Inject(appConfig.KEY) app: AppConfig,
  ) {
    this.issuer = app.issuer;
  }

  onModuleInit(): void {
    this.redirects.register((request, sessionRowId, next) => this.logoutLocation(request, sessionRowId, next));
  }

  /** The upstream's logout URL for the session that just ended, or null when it came from no upstream, or the upstream has no logout or is not to be signed out of. */
  private async logoutLocation(request: FastifyRequest, sessionRowId: string, next: string): Promise<string | null> {
    const upstream = await this.upstreamSessions.find(sessionRowId);
    if (!upstream) return null;
    const provider = await this.providers.findEnabled(upstream.idpId);
    if (!provider || !provider.settings.signOutUpstream) return null;
    const state = randomBytes(16).toString('base64url');
    const location =
      provider.settings.protocol === UPSTREAM_PROTOCOL.Saml
        ? await this.saml.logoutLocation(provider, provider.settings, upstream.logoutHint, state).catch(() => null)
        : await this.openIdConnect.endSessionUrl(provider, provider.settings, upstream.logoutHint, this.signedOutUrl(provider.id), state).catch(() => null);
    if (location === null) return null;
    this.session.holdUpstream(request, 'upstreamSignOut', { idp: provider.id, state, next, at: this.clock.now().getTime() });
    return location;
  }

  /** GET /federation/:idp/signed-out: back from the upstream's logout, on to where the sign-out was going (home when this browser started none). */
  returned(request: FastifyRequest, idp: string, query: { state?: unknown }): InteractionOutcome {
    const pending = this.session.takeUpstream(request, 'upstreamSignOut');
    const matches = pending !== undefined && pending.idp === idp && pending.state === query.state && this.clock.now().getTime() - pending.at <= SIGN_OUT_WAIT_MS;
    return { kind: 'redirect', status: 303, location: matches ? pending.next : '/' };
  }

  /** The post_logout_redirect_uri to register at the upstream. */
  signedOutUrl(idp: string): string {
    return `${this.issuer}/federation/${idp}/signed-out`;
  }
}
