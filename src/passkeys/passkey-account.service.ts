import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ACCOUNT_ROUTES, afterForm, DONE } from '../account/account-routes.js';
import type { InteractionOutcome } from '../auth/interaction/interaction-responder.js';
import { LoginSession } from '../auth/interaction/login-session.js';
import { PageRenderer } from '../auth/interaction/page-renderer.js';
import { Pages } from '../auth/interaction/pages.js';
import { meetsAcr } from '../common/authentication-context.js';
import { Clock } from '../common/clock.js';
import { SecondFactors } from '../factors/second-factors.service.js';
import { passkeyConfig, type PasskeyConfig } from '../config/passkey.config.js';
import { jsonObjectBody } from '../http/content-negotiation.js';
import type { User } from '../users/user.entity.js';
import { PASSKEY_NAME_MAX, PasskeyRegistration } from './passkey-registration.js';
import { passkeyMethods } from './passkey-sign-in.js';
import { CeremonyRateLimit } from './ceremony-rate-limit.js';
import { jsonError, PASSKEY_ROUTES, shownTime, tooManyCeremonies, type JsonOutcome } from './passkey-routes.js';
import { PasskeysService } from './passkeys.service.js';

/** A name as a person types it: trimmed, printable, not empty, at most PASSKEY_NAME_MAX characters. */
function passkeyName(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const name = value.trim().replace(/\s+/g, ' ');
  return name.length > 0 && name.length <= PASSKEY_NAME_MAX && !/\p{Cc}/u.test(name) ? name : null;
}

/**
 * The account page's passkeys: listed to the signed-in person, added and removed by them. Adding
 * and removing need a sign-in of the last few minutes (PasskeyConfig.recentSignInSeconds), so a
 * browser left signed in does not let someone else plant or remove a key.
 */
@Injectable()
export class PasskeyAccount {
  constructor(
    private readonly session: LoginSession,
    private readonly pages: Pages,
    private readonly renderer: PageRenderer,
    private readonly passkeys: PasskeysService,
    private readonly registration: PasskeyRegistration,
    private readonly ceremonies: CeremonyRateLimit,
    private readonly factors: SecondFactors,
    private readonly clock: Clock,
    @Inject(passkeyConfig.KEY) private readonly config: PasskeyConfig,
  ) {}

  async page(request: FastifyRequest, notice?: unknown): Promise<InteractionOutcome> {
    const user = await this.session.currentUser(request);
    if (!user) return this.pages.login(request, { returnTo: PASSKEY_ROUTES.account });
    const list = await this.passkeys.listFor(user.id);
    const page = this.renderer.render(
      'passkeys',
      {
        title: 'Passkeys',
        username: user.username,
        csrfToken: this.session.csrfToken(request),
        available: this.config.rpId !== null,
        recent: await this.signedInRecently(request, user),
        recentMinutes: Math.round(this.config.recentSignInSeconds / 60),
        nameMax: PASSKEY_NAME_MAX,
        notice: notice === 'added' ? 'Your passkey was added.' : notice === 'removed' ? 'The passkey was removed.' : undefined,
        passkeys: list.map((p) => ({ id: p.id, name: p.name, createdAt: shownTime(p.createdAt), lastUsedAt: p.lastUsedAt ? shownTime(p.lastUsedAt) : undefined, synced: p.synced, blockedSince: p.blockedSince ? shownTime(p.blockedSince) : undefined })),
        // "Confirm it's you" offers a passkey only if one still signs in (a blocked one does not: FactorRecords.strongestLevel).
        confirmWithPasskey: list.some((p) => p.blockedSince === null),
      },
      { scripts: this.config.rpId !== null },
    );
    return { kind: 'page', page };
  }

  /** POST /account/passkeys/remove: a form with the CSRF token and the passkey's id, from this page or the account page's list (`return_to`). */
  async remove(request: FastifyRequest, form: Record<string, unknown> | undefined): Promise<InteractionOutcome> {
    const fromAccount = form?.return_to === ACCOUNT_ROUTES.page;
    const user = await this.session.currentUser(request);
    if (!user) return this.pages.login(request, { returnTo: PASSKEY_ROUTES.account });
    if (!this.session.csrfMatches(request, form?.csrf_token)) {
      return this.pages.error(403, 'invalid_request', 'This form has expired or was not sent from this site. Please try again.', { retryUrl: PASSKEY_ROUTES.account });
    }
    if (!(await this.signedInRecently(request, user))) return this.pages.error(403, 'login_required', this.staleMessage(), { retryUrl: PASSKEY_ROUTES.account });
    const id = typeof form?.passkey_id === 'string' ? form.passkey_id : '';
    // A blocked passkey is no factor any more: removing it never leaves the person with fewer.
    const blocked = (await this.passkeys.listFor(user.id)).some((p) => p.id === id && p.blockedSince !== null);
    if (!blocked && (await this.factors.removalWouldLeaveNone(user))) {
      return this.pages.error(403, 'access_denied', 'Your account must have a second factor, and this passkey is your only one. Add another passkey or one-time codes first.', { retryUrl: PASSKEY_ROUTES.account });
    }
    if (!(await this.passkeys.remove(user.id, id, { actor: `user:${user.id}`, ip: request.ip }))) return this.pages.error(404, 'not_found', 'There is no such passkey on your account.', { retryUrl: PASSKEY_ROUTES.account });
    return { kind: 'redirect', status: 303, location: fromAccount ? afterForm(DONE.passkeyRemoved) : `${PASSKEY_ROUTES.account}?done=removed` };
  }

  /** POST /account/passkeys/registration/options (JSON): the creation options, with a challenge for this person. */
  async registrationOptions(request: FastifyRequest): Promise<JsonOutcome> {
    const allowed = await this.mayChange(request);
    if ('status' in allowed) return allowed;
    const wait = await this.ceremonies.wait(request);
    if (wait > 0) return tooManyCeremonies(wait);
    return { status: 200, body: { ...(await this.registration.options(request, allowed.user, allowed.rpId)) } };
  }

  /** POST /account/passkeys/registration (JSON): the name and the authenticator's response. */
  async register(request: FastifyRequest): Promise<JsonOutcome> {
    const allowed = await this.mayChange(request);
    if ('status' in allowed) return allowed;
    const name = passkeyName(allowed.body.name);
    if (!name) return jsonError(400, 'invalid_request', `Give the passkey a name of at most ${PASSKEY_NAME_MAX} characters.`);
    const outcome = await this.registration.verify(request, allowed.user, allowed.rpId, name, allowed.body.response);
    if (!outcome.added) return jsonError(400, 'invalid_request', outcome.reason);
    // The person has just proved the new passkey, verified by it (registration requires user
    // verification): the same session now records that proof too, as after a passkey sign-in, so
    // the next change (a second passkey, removing codes) is not refused for want of the strongest
    // factor, which this passkey now is.
    this.session.raise(request, passkeyMethods(outcome));
    return { status: 200, body: { location: `${PASSKEY_ROUTES.account}?done=added` } };
  }

  /** The checks before any change: passkeys work here, signed in, recently, and the page's CSRF token. */
  private async mayChange(request: FastifyRequest): Promise<JsonOutcome | { user: User; rpId: string; body: Record<string, unknown> }> {
    let body: Record<string, unknown>;
    try {
      body = jsonObjectBody(request, ['application/json']);
    } catch {
      return jsonError(400, 'invalid_request', 'Send a JSON object.');
    }
    const user = await this.session.currentUser(request);
    if (!user) return jsonError(401, 'login_required', 'Sign in first.');
    if (!this.session.csrfMatches(request, body.csrf_token)) return jsonError(403, 'invalid_request', 'This page has expired. Reload it and try again.');
    if (!(await this.signedInRecently(request, user))) return jsonError(403, 'login_required', this.staleMessage());
    if (this.config.rpId === null) return jsonError(409, 'passkeys_unavailable', 'Passkeys need the server to have a domain name.');
    return { user, rpId: this.config.rpId, body };
  }

  /**
   * A sign-in of the last few minutes with the strongest factor the person has (issue 33): with a
   * passkey once they have one, with the one-time code once they have that, else the password.
   */
  private async signedInRecently(request: FastifyRequest, user: User): Promise<boolean> {
    const authTime = this.session.authTime(request);
    if (authTime === null || this.clock.now().getTime() - authTime.getTime() > this.config.recentSignInSeconds * 1000) return false;
    return meetsAcr(this.session.authenticationMethods(request), await this.factors.strongestLevel(user.id));
  }

  private staleMessage(): string {
    return `For your safety, adding or removing a passkey needs a sign-in of the last ${Math.round(this.config.recentSignInSeconds / 60)} minutes. Confirm it's you on the passkeys page, then try again.`;
  }
}
