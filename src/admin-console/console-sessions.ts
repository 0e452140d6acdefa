import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomBytes } from 'node:crypto';
import { Clock } from '../common/clock.js';
import { constantTimeEqual } from '../common/secrets.js';
import { adminConsoleConfig, type AdminConsoleConfig } from '../config/admin-console.config.js';
import { ConsoleApi } from './console-api.js';
import { ConsoleClient, SIGNED_OUT_PATH } from './console-client.js';
import { ConsoleCookie, type ConsoleCookieContents, type ConsoleSessionState } from './console-cookie.js';
import { ConsoleRefusal, formExpired, ReauthenticationRequired, SignInRequired } from './console-errors.js';
import { ConsoleOpenId } from './console-openid.js';
import { CONSOLE, consolePage } from './console-paths.js';
import { ConsoleVisit, type ConsoleAdministrator } from './console-visit.js';
import { InProcessHttp } from './in-process-http.js';

/** How long a sign-in sent to the authorization endpoint may take to come back. */
const PENDING_SIGN_IN_SECONDS = 600;
/** An access token this close to its expiry is refreshed before it is used. */
const REFRESH_MARGIN_SECONDS = 30;

/**
 * The administrator's console session (issue 48), from sign-in to sign-out. It lives in the sealed
 * cookie (ConsoleCookie), so any instance serves it; what makes it real is its tokens, checked by
 * the admin API on every page (GET /me: AdminAccess reads the person's roles at that request) and
 * revoked at sign-out, when the session's idle or absolute limit passes, and on a new sign-in, so
 * no copy of the cookie works anywhere afterwards.
 */
@Injectable()
export class ConsoleSessions {
  constructor(
    private readonly cookie: ConsoleCookie,
    private readonly openId: ConsoleOpenId,
    private readonly client: ConsoleClient,
    private readonly http: InProcessHttp,
    private readonly clock: Clock,
    @Inject(adminConsoleConfig.KEY) private readonly config: AdminConsoleConfig,
  ) {}

  /**
   * A request of a signed-in administrator: their session checked (limits, tokens refreshed when
   * due), who they are and what they may do read from the API, the one-time message of the page
   * before taken. `returnTo`: where to come back after a sign-in, if one is needed.
   */
  async visit(request: FastifyRequest, reply: FastifyReply, returnTo = consolePage(request.url) ?? CONSOLE): Promise<ConsoleVisit> {
    const contents = await this.cookie.read(request);
    let session = contents.session;
    if (session === undefined) throw new SignInRequired(returnTo);
    const now = this.nowSeconds();
    if (now - session.seenAt > this.config.idleSeconds || now - session.startedAt > this.config.maxAgeSeconds) {
      await this.end(request, reply, contents);
      throw new SignInRequired(returnTo);
    }
    if (session.expiresAt - REFRESH_MARGIN_SECONDS <= now) session = await this.refreshed(request, reply, contents, session, returnTo);
    const api = new ConsoleApi(this.http, session.accessToken, request.ip, returnTo);
    const me = await api.answer('GET', '/me');
    if (me.status === 401) {
      await this.cookie.write(reply, { signIn: contents.signIn });
      throw new SignInRequired(returnTo);
    }
    if (me.status === 403) {
      // No administrator role (any more): the console closes at this request, on whichever instance it reaches.
      await this.end(request, reply, contents);
      throw new ConsoleRefusal(403, 'Not an administrator', 'Your account holds no administrator role, so the admin console is closed to you. An owner can give you one.', { retryUrl: '/' });
    }
    if (me.status !== 200) throw new ConsoleRefusal(502, 'Something went wrong', 'The admin API could not say who you are. Try again in a moment.');
    const current: ConsoleSessionState = { ...session, seenAt: now };
    const keep = (flash?: ConsoleCookieContents['flash']) => this.cookie.write(reply, { session: current, signIn: contents.signIn, flash });
    await keep();
    return new ConsoleVisit(administratorFrom(me.body), api, current.csrf, contents.flash ?? {}, now - session.authTime <= this.config.reauthSeconds, keep);
  }

  /** A form's POST: the visit, and the form's CSRF token checked against the session's (constant-time). `page`: the page the form is on. */
  async submit(request: FastifyRequest, reply: FastifyReply, form: Record<string, unknown> | undefined, page: string): Promise<ConsoleVisit> {
    const visit = await this.visit(request, reply, page);
    const sent = form?.csrf_token;
    if (typeof sent !== 'string' || !constantTimeEqual(sent, visit.csrfToken)) throw formExpired(page);
    return visit;
  }

  /** Deleting a client or a person, rotating keys: only within ADMIN_CONSOLE_REAUTH_SECONDS of a sign-in; else a new one first, then back to `confirmation`. */
  requireRecentSignIn(visit: ConsoleVisit, confirmation: string): void {
    if (!visit.recentlySignedIn) throw new ReauthenticationRequired(confirmation);
  }

  /** Starts a sign-in at the authorization endpoint; the URL to send the browser to. */
  async startSignIn(request: FastifyRequest, reply: FastifyReply, returnTo: string, reauthenticate: boolean): Promise<string> {
    const contents = await this.cookie.read(request);
    const { location, pending } = await this.openId.start(request.ip, returnTo, reauthenticate);
    await this.cookie.write(reply, { session: contents.session, signIn: pending });
    return location;
  }

  /**
   * The answer at /admin/callback: a new console session (the tokens of any before it revoked).
   * Where to go next: the page the sign-in was for, or the dashboard when someone else signed in.
   */
  async finishSignIn(request: FastifyRequest, reply: FastifyReply): Promise<string> {
    const contents = await this.cookie.read(request);
    const pending = contents.signIn;
    const now = this.nowSeconds();
    if (pending === undefined || now - pending.at > PENDING_SIGN_IN_SECONDS) {
      throw new ConsoleRefusal(400, 'Sign-in expired', 'This sign-in was not started in this browser, or it took too long. Start again.', { retryUrl: CONSOLE });
    }
    // The pending sign-in is used once, whatever the outcome.
    await this.cookie.write(reply, { session: contents.session });
    const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
    const tokens = await this.openId.finish(request.ip, new URL(this.client.callbackUrl + query), pending);
    const previous = contents.session;
    if (previous !== undefined) await this.openId.revoke(request.ip, [previous.refreshToken, previous.accessToken]);
    const same = previous?.sub === tokens.sub;
    const session: ConsoleSessionState = {
      sub: tokens.sub,
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
      idToken: tokens.idToken,
      expiresAt: tokens.expiresAt,
      authTime: tokens.authTime,
      startedAt: now,
      seenAt: now,
      // The same administrator's open pages keep working; someone else's session starts clean.
      csrf: same && previous ? previous.csrf : randomBytes(32).toString('base64url'),
    };
    await this.cookie.write(reply, { session });
    return same || !pending.reauthenticate ? pending.returnTo : CONSOLE;
  }

  /**
   * Sign-out: the tokens revoked (so every copy of the cookie is refused, on every instance) and
   * the cookie deleted; then RP-Initiated Logout ends the sign-in at the server too. Where to go next.
   */
  async signOut(request: FastifyRequest, reply: FastifyReply, form: Record<string, unknown> | undefined): Promise<string> {
    const contents = await this.cookie.read(request);
    const session = contents.session;
    if (session === undefined) return SIGNED_OUT_PATH;
    const sent = form?.csrf_token;
    if (typeof sent !== 'string' || !constantTimeEqual(sent, session.csrf)) throw formExpired(CONSOLE);
    await this.end(request, reply, { session });
    return session.idToken ? this.openId.endSessionUrl(request.ip, session.idToken) : SIGNED_OUT_PATH;
  }

  /** Ends the console session: its tokens revoked, the cookie left with nothing but a pending sign-in. */
  private async end(request: FastifyRequest, reply: FastifyReply, contents: ConsoleCookieContents): Promise<void> {
    const session = contents.session;
    await this.cookie.write(reply, { signIn: contents.signIn });
    if (session !== undefined) await this.openId.revoke(request.ip, [session.refreshToken, session.accessToken]);
  }

  private async refreshed(request: FastifyRequest, reply: FastifyReply, contents: ConsoleCookieContents, session: ConsoleSessionState, returnTo: string): Promise<ConsoleSessionState> {
    const tokens = session.refreshToken === undefined ? null : await this.openId.refresh(request.ip, session.refreshToken);
    if (tokens === null) {
      await this.end(request, reply, contents);
      throw new SignInRequired(returnTo);
    }
    return { ...session, accessToken: tokens.accessToken, refreshToken: tokens.refreshToken ?? session.refreshToken, expiresAt: tokens.expiresAt };
  }

  private nowSeconds(): number {
    return Math.floor(this.clock.now().getTime() / 1000);
  }
}

/** GET /admin/api/v1/me's answer: who the administrator is and the admin scopes their roles allow now. */
function administratorFrom(body: Record<string, unknown>): ConsoleAdministrator {
  const user = (body.user ?? {}) as { id?: string; username?: string; name?: string | null };
  return {
    userId: String(user.id ?? ''),
    username: String(user.username ?? ''),
    name: user.name ?? null,
    roles: Array.isArray(body.roles) ? body.roles.map(String) : [],
    scopes: Array.isArray(body.scopes) ? body.scopes.map(String) : [],
  };
}
