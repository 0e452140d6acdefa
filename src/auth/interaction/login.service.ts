import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { clientAddress } from '../../rate-limit/client-address.js';
import { parse as parseQuery } from 'node:querystring';
import { LoginThrottle } from '../../rate-limit/login-throttle.service.js';
import { UsersService } from '../../users/users.service.js';
import { SignInMethods } from '../../identity-providers/sign-in-methods.js';
import { SignOutRedirects } from '../../identity-providers/sign-out-redirects.js';
import { SecondFactors } from '../../factors/second-factors.service.js';
import { AuthorizationRequestValidator } from '../authorize/authorization-request.validator.js';
import type { InteractionOutcome } from './interaction-responder.js';
import { LoginSession } from './login-session.js';
import { Pages } from './pages.js';
import { FailedSignIns } from './failed-sign-ins.js';

/** The signed-in person's account page (issue 48); `/` sends a signed-in person there. */
export const ACCOUNT_PAGE = '/account';
/** Where a person enrols one-time codes (also where one who must have a second factor is sent). */
export const ONE_TIME_CODES_PAGE = '/account/one-time-codes';
/** Where the second step of a sign-in asks for the code. */
export const SECOND_FACTOR_PAGE = '/login/code';

export interface LoginForm {
  username?: unknown;
  password?: unknown;
  csrf_token?: unknown;
  return_to?: unknown;
}

/** The device verification page (RFC 8628 §3.3), with the user code of verification_uri_complete: letters, digits and a dash only. */
const DEVICE_RETURN_TO = /^\/device(\?user_code=[A-Za-z0-9-]{1,16})?$/;

/** Where login may send the browser next: only our own authorization endpoint, the device page, home or account pages, never elsewhere. */
export function safeReturnTo(value: unknown): string {
  // Printable ASCII only: the value becomes a Location header, where CR or LF would split the response.
  return typeof value === 'string' && (value === '/' || value === ACCOUNT_PAGE || value === '/account/access' || value === '/account/passkeys' || value === ONE_TIME_CODES_PAGE || /^\/authorize\?[\x21-\x7E]*$/.test(value) || DEVICE_RETURN_TO.test(value)) ? value : '/';
}

@Injectable()
export class LoginService {
  constructor(
    private readonly users: UsersService,
    private readonly session: LoginSession,
    private readonly validator: AuthorizationRequestValidator,
    private readonly pages: Pages,
    private readonly throttle: LoginThrottle,
    private readonly factors: SecondFactors,
    private readonly signInMethods: SignInMethods,
    private readonly signOutRedirects: SignOutRedirects,
    private readonly failures: FailedSignIns,
  ) {}

  /**
   * GET /login: the form, continuing to `return_to` when it names a page here (an upstream failure
   * page's "Start again" carries the authorization request), with that application's name and the
   * ways of signing in it allows. Someone signed in already goes on at once.
   */
  async page(request: FastifyRequest, query: { return_to?: unknown } = {}): Promise<InteractionOutcome> {
    const returnTo = safeReturnTo(query.return_to);
    const user = await this.session.currentUser(request);
    if (user) return { kind: 'redirect', status: 302, location: returnTo };
    const authorization = returnTo.startsWith('/authorize?') ? await this.authorizationFor(returnTo) : undefined;
    return this.pages.login(request, { returnTo, authorization });
  }

  /**
   * POST /login. A wrong password re-renders the form with 401; success starts a new session and
   * continues. After repeated failures the password is not even checked until the wait is over (429).
   */
  async submit(request: FastifyRequest, form: LoginForm): Promise<InteractionOutcome> {
    const returnTo = safeReturnTo(form.return_to);
    if (!this.session.csrfMatches(request, form.csrf_token)) {
      return this.pages.error(403, 'invalid_request', 'This form has expired or was not sent from this site. Please sign in again.', { retryUrl: returnTo });
    }
    const username = typeof form.username === 'string' ? form.username.trim() : '';
    const password = typeof form.password === 'string' ? form.password : '';
    // Home-realm discovery (issue 45): a work address with no password goes to the organization's identity provider.
    if (password === '' && username.includes('@')) {
      const upstream = await this.upstreamFor(username, returnTo);
      if (upstream) return { kind: 'redirect', status: 303, location: `/federation/${upstream}/start?return_to=${encodeURIComponent(returnTo)}&login_hint=${encodeURIComponent(username)}` };
    }
    // Only attempts that check a password count: an empty field guesses nothing.
    const guessing = username !== '' && password !== '';
    const wait = guessing ? await this.throttle.begin(clientAddress(request), username) : 0;
    if (wait > 0) return this.pages.loginThrottled(wait, returnTo);
    const { user, named } = guessing ? await this.users.checkPassword(username, password) : { user: null, named: null };
    if (!user) {
      // A known account's refusal is audited (off the answer's path); checkPassword named it, so no second lookup.
      if (named) void this.failures.note(named, clientAddress(request));
      const authorization = returnTo.startsWith('/authorize?') ? await this.authorizationFor(returnTo) : undefined;
      return this.pages.login(request, { returnTo, authorization, username, failed: true });
    }
    await this.throttle.succeeded(clientAddress(request), username);
    // Enrolling is opting in: a person with a second factor is always asked for it, and nobody is
    // signed in until it is checked (the cookie only remembers, briefly, whose password was right).
    if (await this.factors.hasSecondFactor(user.id)) {
      this.session.awaitSecondFactor(request, user, returnTo);
      return { kind: 'redirect', status: 303, location: SECOND_FACTOR_PAGE };
    }
    // Deactivated between the password check and now (issue 46): the same answer as a wrong password.
    if (!(await this.session.logIn(request, user))) return this.pages.login(request, { returnTo, username, failed: true });
    // 303: the browser follows with GET (RFC 9700 §4.12 warns against 307 after a credential POST).
    return { kind: 'redirect', status: 303, location: returnTo };
  }

  async logOut(request: FastifyRequest, form: LoginForm): Promise<InteractionOutcome> {
    if (!this.session.csrfMatches(request, form.csrf_token)) return { kind: 'redirect', status: 303, location: '/' };
    const sessionRowId = this.session.sessionRowId(request);
    await this.session.logOut(request);
    // Signed in through an upstream identity provider: signed out there too, then home (issue 45).
    return { kind: 'redirect', status: 303, location: await this.signOutRedirects.through(request, sessionRowId, '/') };
  }

  /**
   * A refused password for a known username, among that person's security events (issue 48), with
   * the address. Not awaited: a known username's refusal must take no longer than an unknown one's
   * (no account enumeration by timing), and a lost event must not fail the answer.
   */
  /** The upstream identity provider, among those the client being signed in to allows, whose domains hold this address's; undefined when none. */
  private async upstreamFor(address: string, returnTo: string): Promise<string | undefined> {
    const domain = address.slice(address.lastIndexOf('@') + 1).toLowerCase();
    const authorization = returnTo.startsWith('/authorize?') ? await this.authorizationFor(returnTo) : undefined;
    const { upstream } = await this.signInMethods.forClient(authorization?.client);
    return upstream.find((provider) => provider.settings.domains.includes(domain))?.id;
  }

  /** The authorization request being continued, for the client's name on the login page; undefined if it no longer validates. */
  private async authorizationFor(returnTo: string) {
    const rawQuery = returnTo.slice('/authorize?'.length);
    return this.validator.validate(parseQuery(rawQuery), rawQuery).catch(() => undefined);
  }
}
