import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { LoginSession } from '../auth/interaction/login-session.js';
import { safeReturnTo } from '../auth/interaction/login.service.js';
import { passkeyConfig, type PasskeyConfig } from '../config/passkey.config.js';
import { jsonObjectBody } from '../http/content-negotiation.js';
import { CeremonyRateLimit } from './ceremony-rate-limit.js';
import { PasskeySignIn } from './passkey-sign-in.js';
import { blockedNotice, jsonError, tooManyCeremonies, type JsonOutcome } from './passkey-routes.js';

/** The sign-in page's passkey endpoints (JSON, posted by /assets/passkeys.js with the page's CSRF token). */
@Injectable()
export class PasskeyLogin {
  constructor(
    private readonly session: LoginSession,
    private readonly signIn: PasskeySignIn,
    private readonly ceremonies: CeremonyRateLimit,
    @Inject(passkeyConfig.KEY) private readonly config: PasskeyConfig,
  ) {}

  /** POST /login/passkey/options: request options with a fresh challenge. */
  async options(request: FastifyRequest): Promise<JsonOutcome> {
    const checked = this.check(request);
    if ('status' in checked) return checked;
    const wait = await this.ceremonies.wait(request);
    if (wait > 0) return tooManyCeremonies(wait);
    return { status: 200, body: { ...(await this.signIn.options(request, checked.rpId)) } };
  }

  /**
   * POST /login/passkey: the assertion; on success the session is the person's and the answer
   * names where to go, the login form's return_to as the password form would (LoginService).
   */
  async submit(request: FastifyRequest): Promise<JsonOutcome> {
    const checked = this.check(request);
    if ('status' in checked) return checked;
    const outcome = await this.signIn.verify(request, checked.rpId, checked.body.response);
    if (outcome.signedIn) return { status: 200, body: { location: safeReturnTo(checked.body.return_to) } };
    if (outcome.retryAfterSeconds !== undefined) {
      return { ...jsonError(429, 'too_many_requests', `Too many failed attempts. Try again in ${outcome.retryAfterSeconds} seconds.`), headers: { 'Retry-After': String(outcome.retryAfterSeconds) } };
    }
    if (outcome.blockedSince) {
      const why = `This passkey is blocked: ${blockedNotice(outcome.blockedSince)}, so it no longer signs anyone in.`;
      return jsonError(403, 'passkey_blocked', `${why} Sign in with your password, then remove it on the Passkeys page and add a new one, or ask an administrator.`);
    }
    return jsonError(401, 'access_denied', 'This passkey was not accepted. Try again, or sign in with your password.');
  }

  private check(request: FastifyRequest): JsonOutcome | { rpId: string; body: Record<string, unknown> } {
    let body: Record<string, unknown>;
    try {
      body = jsonObjectBody(request, ['application/json']);
    } catch {
      return jsonError(400, 'invalid_request', 'Send a JSON object.');
    }
    if (!this.session.csrfMatches(request, body.csrf_token)) return jsonError(403, 'invalid_request', 'This page has expired. Reload it and try again.');
    if (this.config.rpId === null) return jsonError(409, 'passkeys_unavailable', 'Passkeys need the server to have a domain name.');
    return { rpId: this.config.rpId, body };
  }
}
