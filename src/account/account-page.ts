import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { InteractionOutcome } from '../auth/interaction/interaction-responder.js';
import { LoginSession } from '../auth/interaction/login-session.js';
import { PageRenderer } from '../auth/interaction/page-renderer.js';
import { meetsAcr } from '../common/authentication-context.js';
import { factorsConfig, type FactorsConfig } from '../config/factors.config.js';
import { mailConfig, type MailConfig } from '../config/mail.config.js';
import { passkeyConfig, type PasskeyConfig } from '../config/passkey.config.js';
import { SecondFactors } from '../factors/second-factors.service.js';
import { ScopeCatalog } from '../scopes/scope-catalog.js';
import type { User } from '../users/user.entity.js';
import { noticeFor, type AccountQuery, type Notice } from './account-notices.js';
import { AccountOverview } from './account-overview.js';
import { ACCOUNT_ROUTES } from './account-routes.js';
import { eventsView, factorsView, grantsView, sessionsView } from './account-view.js';
import type { ProfileFormState } from './profile-form.js';

/** A refused form, shown again on the page (400): what was typed (never a password) and what to fix. */
export interface AccountFormState {
  status?: number;
  notice?: Notice;
  profile?: ProfileFormState;
  passwordError?: string;
}

/**
 * GET /account (issue 48): one page with all a person manages, in sections (views/account*.eta),
 * working without JavaScript; adding a passkey, which WebAuthn does in script, is on its own page.
 */
@Injectable()
export class AccountPage {
  constructor(
    private readonly session: LoginSession,
    private readonly renderer: PageRenderer,
    private readonly overview: AccountOverview,
    private readonly factors: SecondFactors,
    private readonly scopes: ScopeCatalog,
    @Inject(factorsConfig.KEY) private readonly factorsSettings: FactorsConfig,
    @Inject(passkeyConfig.KEY) private readonly passkeys: PasskeyConfig,
    @Inject(mailConfig.KEY) private readonly mail: MailConfig,
  ) {}

  async page(request: FastifyRequest, query: AccountQuery): Promise<InteractionOutcome> {
    const user = await this.session.currentUser(request);
    if (!user) return signInFirst();
    return this.render(request, user, { notice: await noticeFor(query ?? {}, (clientId) => this.overview.applicationName(clientId)) });
  }

  async render(request: FastifyRequest, user: User, state: AccountFormState = {}): Promise<InteractionOutcome> {
    const [overview, recent] = await Promise.all([this.overview.of(user), this.signedInRecently(request, user)]);
    const emailEditable = this.emailEditable();
    const page = this.renderer.render(
      'account',
      {
        title: 'Your account',
        wide: true,
        csrfToken: this.session.csrfToken(request),
        notice: state.notice,
        person: { username: user.username, name: user.name, email: user.email, emailVerified: user.emailVerified },
        profile: { values: state.profile?.values ?? { name: user.name ?? '', email: user.email ?? '' }, errors: state.profile?.errors ?? {}, emailEditable },
        password: { has: user.passwordHash !== '', error: state.passwordError },
        factors: { ...factorsView(overview.factors), mustHave: this.factors.mustHaveSecondFactor(user) },
        passkeys: { available: this.passkeys.rpId !== null },
        recent,
        recentMinutes: Math.round(this.factorsSettings.recentSignInSeconds / 60),
        sessions: sessionsView(overview.sessions, overview.clientNames, this.session.sessionRowId(request)),
        grants: grantsView(overview.grants, this.scopes),
        events: eventsView(overview.events),
        upstream: overview.upstream,
        routes: ACCOUNT_ROUTES,
      },
      { status: state.status ?? 200, formTargets: overview.formTargets },
    );
    return { kind: 'page', page };
  }

  /** With email set up, a new address is confirmed from it first (/account/email); without, it changes on the profile form, unconfirmed. */
  emailEditable(): boolean {
    return this.mail.smtpUrl === null;
  }

  /**
   * A sign-in of the last few minutes with the strongest factor the person has: what changing a
   * factor or a passkey needs (AccountFactorsService, PasskeyAccount), so the page offers those
   * changes only then, and otherwise says how to confirm it's you.
   */
  private async signedInRecently(request: FastifyRequest, user: User): Promise<boolean> {
    if (!this.session.signedInWithin(request, this.factorsSettings.recentSignInSeconds)) return false;
    return meetsAcr(this.session.authenticationMethods(request), await this.factors.strongestLevel(user.id));
  }
}

/** Not signed in: the sign-in form, which comes back here. */
export function signInFirst(): InteractionOutcome {
  return { kind: 'redirect', status: 303, location: `/login?return_to=${encodeURIComponent(ACCOUNT_ROUTES.page)}` };
}
