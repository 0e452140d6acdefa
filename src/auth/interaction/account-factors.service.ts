import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { factorsConfig, type FactorsConfig } from '../../config/factors.config.js';
import { SecondFactors } from '../../factors/second-factors.service.js';
import { meetsAcr } from '../../common/authentication-context.js';
import { clientAddress } from '../../rate-limit/client-address.js';
import type { User } from '../../users/user.entity.js';
import type { InteractionOutcome } from './interaction-responder.js';
import { LoginSession } from './login-session.js';
import { ACCOUNT_PAGE, ONE_TIME_CODES_PAGE, safeReturnTo } from './login.service.js';
import { Pages } from './pages.js';

export interface FactorForm {
  code?: unknown;
  csrf_token?: unknown;
  return_to?: unknown;
}

/**
 * The account page's second factors: enrolling one-time codes (confirmed by a first code), new
 * recovery codes, turning them off. Every change needs a sign-in within FACTOR_CHANGE_RECENT_SECONDS
 * (a person with a factor was asked for it at that sign-in), so that a browser left signed in, or
 * a stolen session cookie, cannot swap the factor; and, for a person who has a second factor, a
 * sign-in that used it.
 */
@Injectable()
export class AccountFactorsService {
  constructor(
    private readonly session: LoginSession,
    private readonly factors: SecondFactors,
    private readonly pages: Pages,
    @Inject(factorsConfig.KEY) private readonly config: FactorsConfig,
  ) {}

  async enrolmentPage(request: FastifyRequest, returnTo: unknown): Promise<InteractionOutcome> {
    const user = await this.session.currentUser(request);
    if (!user) return this.pages.login(request, { returnTo: ONE_TIME_CODES_PAGE });
    if (await this.factors.hasSecondFactor(user.id)) return { kind: 'redirect', status: 302, location: ACCOUNT_PAGE };
    // Not signed in recently: the sign-in form first (with the second factor, if any), then back here or to the request that sent the person.
    const next = safeReturnTo(returnTo);
    if (!this.recent(request)) return this.pages.login(request, { returnTo: next.startsWith('/authorize?') ? next : ONE_TIME_CODES_PAGE, username: user.username });
    const secret = this.session.enrolmentSecret(request, () => this.factors.newSecret());
    return this.pages.enrolOneTimeCodes(request, await this.factors.enrolmentView(user, secret), { returnTo: next, required: this.factors.mustHaveSecondFactor(user) });
  }

  async confirm(request: FastifyRequest, form: FactorForm): Promise<InteractionOutcome> {
    const checked = await this.checkForm(request, form);
    if ('kind' in checked) return checked;
    const { user } = checked;
    const returnTo = safeReturnTo(form.return_to);
    const secret = this.session.enrolmentSecret(request, () => this.factors.newSecret());
    const code = typeof form.code === 'string' ? form.code.replace(/\s/g, '') : '';
    const codes = await this.factors.confirm(user, secret, code, clientAddress(request));
    if (!codes) {
      if (await this.factors.hasSecondFactor(user.id)) return { kind: 'redirect', status: 303, location: ACCOUNT_PAGE };
      return this.pages.enrolOneTimeCodes(request, await this.factors.enrolmentView(user, secret), { returnTo, required: this.factors.mustHaveSecondFactor(user), failed: true });
    }
    this.session.forgetEnrolmentSecret(request);
    // The person just proved the authenticator, in a session of a recent sign-in: the same session now records both factors.
    this.session.raise(request, ['otp', 'mfa']);
    return this.pages.recoveryCodes(codes, { message: 'One-time codes are on. From now on you are asked for a code after your password.', continueTo: returnTo });
  }

  async regenerateRecoveryCodes(request: FastifyRequest, form: FactorForm): Promise<InteractionOutcome> {
    const checked = await this.checkForm(request, form);
    if ('kind' in checked) return checked;
    if (!(await this.factors.hasSecondFactor(checked.user.id))) return { kind: 'redirect', status: 303, location: ACCOUNT_PAGE };
    const codes = await this.factors.regenerateRecoveryCodes(checked.user);
    return this.pages.recoveryCodes(codes, { message: 'New recovery codes were made; the old ones no longer work.', continueTo: ACCOUNT_PAGE });
  }

  async remove(request: FastifyRequest, form: FactorForm): Promise<InteractionOutcome> {
    const checked = await this.checkForm(request, form);
    if ('kind' in checked) return checked;
    if (await this.factors.removalWouldLeaveNone(checked.user)) {
      return this.pages.error(403, 'access_denied', 'Your account must have a second factor, and one-time codes are your only one, so they cannot be turned off. Add a passkey first, or ask an administrator to reset them.', { retryUrl: ACCOUNT_PAGE });
    }
    await this.factors.removeOneTimeCodes(checked.user.id, `user:${checked.user.id}`);
    return { kind: 'redirect', status: 303, location: ACCOUNT_PAGE };
  }

  /** The signed-in person behind a form with this session's CSRF token and a recent sign-in, or the page that says why not. */
  private async checkForm(request: FastifyRequest, form: FactorForm): Promise<{ user: User } | InteractionOutcome> {
    const user = await this.session.currentUser(request);
    if (!user) return this.pages.login(request, { returnTo: ACCOUNT_PAGE });
    if (!this.session.csrfMatches(request, form.csrf_token)) {
      return this.pages.error(403, 'invalid_request', 'This form has expired or was not sent from this site. Please try again.', { retryUrl: ACCOUNT_PAGE });
    }
    if (!this.recent(request)) return this.signInAgain();
    // With the strongest factor the person has (a passkey, else the code): a password-only session from before the enrolment does not count.
    if (!meetsAcr(this.session.authenticationMethods(request), await this.factors.strongestLevel(user.id))) return this.signInAgain();
    return { user };
  }

  private recent(request: FastifyRequest): boolean {
    return this.session.signedInWithin(request, this.config.recentSignInSeconds);
  }

  private signInAgain(): InteractionOutcome {
    return this.pages.error(403, 'login_required', 'For your safety, changing how you sign in needs a recent sign-in. Sign out, sign in again, and come back within a few minutes.', { retryUrl: ACCOUNT_PAGE });
  }
}
