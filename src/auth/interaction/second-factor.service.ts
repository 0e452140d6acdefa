import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { parse as parseQuery } from 'node:querystring';
import { factorsConfig, type FactorsConfig } from '../../config/factors.config.js';
import { SecondFactors } from '../../factors/second-factors.service.js';
import { clientAddress } from '../../rate-limit/client-address.js';
import { AuthorizationRequestValidator } from '../authorize/authorization-request.validator.js';
import type { InteractionOutcome } from './interaction-responder.js';
import { LoginSession } from './login-session.js';
import { SECOND_FACTOR_PAGE } from './login.service.js';
import { Pages } from './pages.js';

export interface SecondFactorForm {
  code?: unknown;
  csrf_token?: unknown;
}

/**
 * The second step of a sign-in, and of a step-up: after a right password (or for a session
 * signed in with a password only, when a client asks for more), the code from the authenticator
 * app or a recovery code. Only then does LoginSession sign the person in, with amr
 * pwd + otp + mfa (RFC 8176 §2).
 */
@Injectable()
export class SecondFactorService {
  constructor(
    private readonly session: LoginSession,
    private readonly factors: SecondFactors,
    private readonly pages: Pages,
    private readonly validator: AuthorizationRequestValidator,
    @Inject(factorsConfig.KEY) private readonly config: FactorsConfig,
  ) {}

  async page(request: FastifyRequest): Promise<InteractionOutcome> {
    const pending = await this.session.pendingSecondFactor(request, this.config.pendingSeconds);
    if (!pending) return { kind: 'redirect', status: 302, location: '/login' };
    return this.pages.secondFactor(request, pending.user, { authorization: await this.authorizationFor(pending.returnTo) });
  }

  async submit(request: FastifyRequest, form: SecondFactorForm): Promise<InteractionOutcome> {
    if (!this.session.csrfMatches(request, form.csrf_token)) {
      return this.pages.error(403, 'invalid_request', 'This form has expired or was not sent from this site. Please sign in again.', { retryUrl: '/login' });
    }
    const pending = await this.session.pendingSecondFactor(request, this.config.pendingSeconds);
    if (!pending) return this.pages.error(400, 'invalid_request', 'Your sign-in took too long. Please sign in again.', { retryUrl: '/login' });
    const code = typeof form.code === 'string' ? form.code : '';
    if (code.trim() === '') return this.pages.secondFactor(request, pending.user, { authorization: await this.authorizationFor(pending.returnTo), failed: true });
    const check = await this.factors.check(pending.user, code, clientAddress(request));
    if (!check.ok && check.waitSeconds) return this.pages.loginThrottled(check.waitSeconds, SECOND_FACTOR_PAGE);
    if (!check.ok) return this.pages.secondFactor(request, pending.user, { authorization: await this.authorizationFor(pending.returnTo), failed: true });
    // Step-up of a live session of this person: the same session, raised (clients signed in through
    // it stay signed in). Otherwise the sign-in itself: logIn starts a fresh session (the cookie is
    // regenerated) and the pending state goes with it.
    const current = await this.session.currentUser(request);
    // The first factor is what came before the code: a password, or an upstream sign-in (issue 45).
    if (current?.id === pending.user.id) this.session.raise(request, ['otp', 'mfa']);
    else if (!(await this.session.logIn(request, pending.user, [...pending.first, 'otp', 'mfa'], pending.upstream))) {
      return this.pages.error(403, 'access_denied', 'This account has been deactivated. Please ask your administrator.', { retryUrl: '/login' });
    }
    return { kind: 'redirect', status: 303, location: pending.returnTo };
  }

  /** The authorization request being continued, for the client's name on the page; undefined if it no longer validates. */
  private async authorizationFor(returnTo: string) {
    if (!returnTo.startsWith('/authorize?')) return undefined;
    const rawQuery = returnTo.slice('/authorize?'.length);
    return this.validator.validate(parseQuery(rawQuery), rawQuery).catch(() => undefined);
  }
}
