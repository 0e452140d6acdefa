import { Inject, Injectable, Logger } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { parse as parseQuery } from 'node:querystring';
import { AuditService } from '../audit/audit.service.js';
import { AuthorizationRequestValidator } from '../auth/authorize/authorization-request.validator.js';
import { Prompt, type AuthorizationRequest } from '../auth/authorize/authorization-request.js';
import type { InteractionOutcome } from '../auth/interaction/interaction-responder.js';
import { LoginSession } from '../auth/interaction/login-session.js';
import { safeReturnTo, SECOND_FACTOR_PAGE } from '../auth/interaction/login.service.js';
import { Pages } from '../auth/interaction/pages.js';
import { ACR, meetsAcr, type AuthenticationMethod } from '../common/authentication-context.js';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/domain-error.js';
import { appConfig, type AppConfig } from '../config/app.config.js';
import { factorsConfig, type FactorsConfig } from '../config/factors.config.js';
import { SecondFactors } from '../factors/second-factors.service.js';
import { UPSTREAM_PROTOCOL, type UpstreamProvider } from '../identity-providers/identity-provider-settings.js';
import { IdentityProvidersService } from '../identity-providers/identity-providers.service.js';
import { UpstreamAccounts } from '../identity-providers/upstream-accounts.service.js';
import { FederationMetrics } from './federation.metrics.js';
import { UpstreamOpenIdConnect } from './oidc/upstream-openid-connect.js';
import { SamlServiceProvider } from './saml/saml-service-provider.js';
import { UPSTREAM_WAIT_MS, type PendingUpstreamSignIn } from '../identity-providers/pending-upstream.js';
import { failureMessage, UpstreamFailure } from './upstream-failure.js';
import type { UpstreamIdentity } from './upstream-identity.js';

/** What GET /federation/:idp/start reads. */
export interface StartQuery {
  return_to?: unknown;
  login_hint?: unknown;
}

/** How a sign-in goes upstream: what the protocol sends besides its own parameters. */
export interface UpstreamStartOptions {
  returnTo: string;
  loginHint?: string;
  /** The authorization request here asked for a new sign-in: prompt=login upstream (OpenID Connect), ForceAuthn (SAML). */
  forceLogin: boolean;
  maxAge?: number;
  /** A signed-in person linking this provider to their account. */
  linkTo?: string;
}

/** The error code each failure's page shows (RFC 6749 §4.1.2.1's names, for people who report it). */
const FAILURE_CODES: Record<UpstreamFailure['kind'], string> = {
  unreachable: 'temporarily_unavailable',
  upstream_error: 'temporarily_unavailable',
  misconfigured: 'server_error',
  invalid_answer: 'invalid_request',
  expired: 'invalid_request',
  deactivated: 'access_denied',
  denied: 'access_denied',
  no_account: 'access_denied',
};

/** Where the person's own linking step starts and lands afterwards: their account's home page. */
export const LINKED_ACCOUNTS_PAGE = '/';

/**
 * Sign-in through an upstream identity provider (issue 45), whatever its protocol: sending the
 * browser there with what the authorization request here asks (login_hint, a new sign-in), and,
 * once the protocol verified the answer, signing in the person it names. The protocol classes
 * (UpstreamOpenIdConnect, the SAML service provider) check answers; this class decides whom they
 * sign in and at what level, in one place.
 */
@Injectable()
export class UpstreamSignIn {
  private readonly logger = new Logger('Federation');
  private readonly issuer: string;

  constructor(
    private readonly providers: IdentityProvidersService,
    private readonly accounts: UpstreamAccounts,
    private readonly session: LoginSession,
    private readonly factors: SecondFactors,
    private readonly openIdConnect: UpstreamOpenIdConnect,
    private readonly saml: SamlServiceProvider,
    private readonly validator: AuthorizationRequestValidator,
    private readonly pages: Pages,
    private readonly audit: AuditService,
    private readonly metrics: FederationMetrics,
    private readonly clock: Clock,
    @Inject(appConfig.KEY) app: AppConfig,
    @Inject(factorsConfig.KEY) private readonly factorsConfig: FactorsConfig,
  ) {
    this.issuer = app.issuer;
  }

  /** GET /federation/:idp/start: off to the provider, remembering in the cookie what must come back. */
  async start(request: FastifyRequest, idpId: string, query: StartQuery): Promise<InteractionOutcome> {
    const provider = await this.providers.findEnabled(idpId);
    if (!provider) return this.pages.error(404, 'invalid_request', 'There is no such way to sign in here.', { retryUrl: '/login' });
    const returnTo = safeReturnTo(query.return_to);
    const authorization = await this.authorizationFor(returnTo);
    const loginHint = typeof query.login_hint === 'string' && query.login_hint.length <= 254 ? query.login_hint : authorization?.loginHint;
    return this.send(request, provider, {
      returnTo,
      loginHint,
      // Core §3.1.2.1: prompt=login and select_account ask for a new sign-in; max_age bounds its age upstream too.
      forceLogin: authorization !== undefined && (authorization.prompt.has(Prompt.Login) || authorization.prompt.has(Prompt.SelectAccount)),
      maxAge: authorization?.maxAge ?? authorization?.client.openId.defaultMaxAge ?? undefined,
    });
  }

  /**
   * POST /federation/:idp/link: the signed-in person's explicit step to link this provider to their
   * account. A recent sign-in here is asked for first, as for changing a factor.
   */
  async startLink(request: FastifyRequest, idpId: string, form: { csrf_token?: unknown }): Promise<InteractionOutcome> {
    if (!this.session.csrfMatches(request, form.csrf_token)) return this.pages.error(403, 'invalid_request', 'This form has expired or was not sent from this site. Please start again.', { retryUrl: LINKED_ACCOUNTS_PAGE });
    const user = await this.session.currentUser(request);
    if (!user) return this.pages.login(request, { returnTo: LINKED_ACCOUNTS_PAGE });
    // A new way into the account, as a new factor is: a stolen session cookie alone must not add one.
    if (!this.session.signedInWithin(request, this.factorsConfig.recentSignInSeconds)) {
      return this.pages.error(403, 'login_required', 'For your safety, linking another sign-in needs a recent sign-in. Sign out, sign in again, and come back within a few minutes.', { retryUrl: LINKED_ACCOUNTS_PAGE });
    }
    const provider = await this.providers.findEnabled(idpId);
    if (!provider) return this.pages.error(404, 'invalid_request', 'There is no such way to sign in here.', { retryUrl: LINKED_ACCOUNTS_PAGE });
    return this.send(request, provider, { returnTo: LINKED_ACCOUNTS_PAGE, forceLogin: true, linkTo: user.id });
  }

  /** GET /federation/:idp/callback: the OpenID Connect provider's answer (RFC 6749 §4.1.2). */
  async openIdCallback(request: FastifyRequest, idpId: string): Promise<InteractionOutcome> {
    const provider = await this.providers.findEnabled(idpId);
    if (!provider || provider.settings.protocol !== UPSTREAM_PROTOCOL.OpenIdConnect) return this.pages.error(404, 'invalid_request', 'There is no such way to sign in here.', { retryUrl: '/login' });
    const pending = this.takePending(request, idpId);
    try {
      // RFC 9700 §4.4 (mix-up): the answer is accepted only at the callback of the provider this browser was sent to, and (RFC 9207) with its iss.
      if (!pending || pending.state === undefined) throw new UpstreamFailure(provider, 'expired', 'no sign-in with this provider is pending in this browser');
      const identity = await this.openIdConnect.finish(provider, provider.settings, pending, new URL(request.url, this.issuer));
      return await this.complete(request, provider, identity, pending);
    } catch (error) {
      return this.failed(provider, error, pending?.returnTo);
    }
  }

  /**
   * The upstream vouched for `identity` (its protocol checked the answer): link it (the person's
   * own step), or sign in the person linked to it, creating them when the provider may. The
   * upstream's methods count toward our level only when the provider is trusted for them; a
   * person with a second factor here who did not prove one upstream is asked for it.
   */
  async complete(request: FastifyRequest, provider: UpstreamProvider, identity: UpstreamIdentity, pending: PendingUpstreamSignIn): Promise<InteractionOutcome> {
    if (pending.linkTo !== undefined) return this.completeLink(request, provider, identity, pending.linkTo);
    const found = await this.accounts.personFor(provider, identity.subject, identity.claims);
    if (!found) throw new UpstreamFailure(provider, 'no_account', `no person is linked to subject ${identity.subject.slice(0, 64)} and the provider creates no accounts`);
    const { user, created } = found;
    if (!user.active) throw new UpstreamFailure(provider, 'deactivated', `the person linked to subject ${identity.subject.slice(0, 64)} is deactivated`);
    const amr: AuthenticationMethod[] = [...new Set<AuthenticationMethod>(['fed', ...(provider.settings.trustAuthenticationLevel ? identity.amr : [])])];
    await this.accounts.signedIn(provider, identity.subject, user.id, identity.claims);
    this.metrics.signedIn(provider.id, created);
    const upstream = { idp: provider.id, subject: identity.subject, upstreamSid: identity.session.upstreamSid, logoutHint: identity.session.logoutHint };
    if (!meetsAcr(amr, ACR.multiFactor) && (await this.factors.hasSecondFactor(user.id))) {
      this.session.awaitSecondFactor(request, user, pending.returnTo, amr, upstream);
      return { kind: 'redirect', status: 303, location: SECOND_FACTOR_PAGE };
    }
    if (!(await this.session.logIn(request, user, amr, upstream))) throw new UpstreamFailure(provider, 'deactivated', `person ${user.id} was deactivated during the sign-in`);
    await this.audit.record({ actor: `user:${user.id}`, action: 'user.signed_in_upstream', subject: `user:${user.id}`, details: { idp: provider.id, created, amr } });
    // 303: the browser follows with GET (RFC 9700 §4.12).
    return { kind: 'redirect', status: 303, location: pending.returnTo };
  }

  /** Remembers, in this browser's encrypted cookie, what the upstream's answer must match (one sign-in at a time). */
  remember(request: FastifyRequest, pending: PendingUpstreamSignIn): void {
    this.session.holdUpstream(request, 'upstream', pending);
  }

  /** The sign-in this browser sent to `idp`, still within the wait; taken out of the cookie, so an answer is used once. */
  takePending(request: FastifyRequest, idp: string): PendingUpstreamSignIn | null {
    const pending = this.session.takeUpstream(request, 'upstream');
    if (pending === undefined || pending.idp !== idp || this.clock.now().getTime() - pending.at > UPSTREAM_WAIT_MS) return null;
    return pending;
  }

  /** The page an UpstreamFailure becomes; anything else is not ours to explain and goes on to the filter. */
  failed(provider: Pick<UpstreamProvider, 'id' | 'displayName'>, error: unknown, returnTo: string | undefined): InteractionOutcome {
    if (!(error instanceof UpstreamFailure)) throw error;
    this.metrics.failed(provider.id, error.kind);
    this.logger.warn(`upstream sign-in failed: ${error.message}`);
    void this.audit.record({ actor: `idp:${provider.id}`, action: 'upstream.sign_in_failed', subject: `idp:${provider.id}`, details: { reason: error.kind, detail: error.detail } }).catch(() => undefined);
    const { status, message } = failureMessage(error);
    // Back to the sign-in page (never straight back upstream: no loop).
    const retry = returnTo && returnTo !== '/' ? `/login?return_to=${encodeURIComponent(returnTo)}` : '/login';
    return this.pages.error(status, FAILURE_CODES[error.kind], message, { retryUrl: retry });
  }

  private async completeLink(request: FastifyRequest, provider: UpstreamProvider, identity: UpstreamIdentity, linkTo: string): Promise<InteractionOutcome> {
    const user = await this.session.currentUser(request);
    if (user?.id !== linkTo) throw new UpstreamFailure(provider, 'expired', 'the person who asked to link is no longer signed in here');
    try {
      await this.accounts.link(provider.id, identity.subject, user, 'linked', `user:${user.id}`);
    } catch (error) {
      if (error instanceof DomainError && error.code === 'upstream_link_taken') {
        return this.pages.error(409, 'invalid_request', `That ${provider.displayName} account is linked to another person here already, so it was not linked to yours.`, { retryUrl: LINKED_ACCOUNTS_PAGE });
      }
      throw error;
    }
    return { kind: 'redirect', status: 303, location: LINKED_ACCOUNTS_PAGE };
  }

  private async send(request: FastifyRequest, provider: UpstreamProvider, options: UpstreamStartOptions): Promise<InteractionOutcome> {
    const settings = provider.settings;
    try {
      if (settings.protocol === UPSTREAM_PROTOCOL.Saml) {
        const { location, form, pending } = await this.saml.start(provider, settings, { forceLogin: options.forceLogin, maxAge: options.maxAge });
        this.remember(request, { idp: provider.id, ...pending, returnTo: options.returnTo, at: this.clock.now().getTime(), linkTo: options.linkTo });
        this.metrics.started(provider.id);
        if (form) return this.pages.formPost(location, form);
        // SAML's AuthnRequest has no hint a provider must not refuse (a <Subject> it cannot match is an error), but
        // Entra ID and others read login_hint beside the HTTP-Redirect binding's parameters, outside its signature (Bindings §3.4.4.1).
        const hinted = new URL(location);
        if (options.loginHint && settings.passLoginHint) hinted.searchParams.set('login_hint', options.loginHint);
        return { kind: 'redirect', status: 303, location: hinted.href };
      }
      const { location, pending } = await this.openIdConnect.start(provider, settings, { callbackUrl: this.providers.callbackUrls(provider.id, settings.protocol).redirect_uri!, loginHint: options.loginHint, forceLogin: options.forceLogin, maxAge: options.maxAge });
      this.remember(request, { idp: provider.id, ...pending, returnTo: options.returnTo, at: this.clock.now().getTime(), linkTo: options.linkTo });
      this.metrics.started(provider.id);
      return { kind: 'redirect', status: 303, location };
    } catch (error) {
      return this.failed(provider, error, options.returnTo);
    }
  }

  /** The authorization request a return_to continues; undefined when it is none or no longer validates. */
  private async authorizationFor(returnTo: string): Promise<AuthorizationRequest | undefined> {
    if (!returnTo.startsWith('/authorize?')) return undefined;
    const rawQuery = returnTo.slice('/authorize?'.length);
    return this.validator.validate(parseQuery(rawQuery), rawQuery).catch(() => undefined);
  }
}
