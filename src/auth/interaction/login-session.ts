import { Inject, Injectable } from '@nestjs/common';
import type { SessionData } from '@fastify/secure-session';
import type { FastifyRequest } from 'fastify';
import type { PendingUpstreamSignIn, PendingUpstreamSignOut, UpstreamSignInRecord } from '../../identity-providers/pending-upstream.js';
import { UpstreamSessionStore } from '../../identity-providers/upstream-session.store.js';
import { randomBytes } from 'node:crypto';
import { Clock } from '../../common/clock.js';
import { constantTimeEqual } from '../../common/secrets.js';
import { sessionConfig, type SessionConfig } from '../../config/session.config.js';
import type { User } from '../../users/user.entity.js';
import type { AuthenticationMethod } from '../../common/authentication-context.js';
import { AuditService } from '../../audit/audit.service.js';
import { ConsentsService, type SignedInPerson } from '../../consents/consents.service.js';
import { describeDevice } from '../../sessions/device-description.js';
import { SessionsService } from '../../sessions/sessions.service.js';
import { UsersService } from '../../users/users.service.js';
import { signInEvents } from './sign-in-events.js';

declare module '@fastify/secure-session' {
  interface SessionData {
    /** The logged-in user's id. */
    uid: string;
    /** When the user logged in, in epoch seconds. */
    authTime: number;
    /** The secret naming this sign-in's row in the sessions table (only its hash is stored there). */
    sid: string;
    /** Synchronizer token of the login and consent forms. */
    csrf: string;
    /** The authorization request (a hash of its query) that last asked for a sign-in, and when, in epoch milliseconds. */
    signInAsked?: { request: string; at: number };
    /** When the user signed in, in epoch milliseconds: finer than authTime, to tell a sign-in from a request made in the same second. */
    signedInAt?: number;
    /** How the person proved who they are in this session: RFC 8176 authentication method references. */
    amr?: AuthenticationMethod[];
    /** The upstream identity provider this session's sign-in went through (issue 45); absent for a local sign-in. */
    idp?: string;
    /** A right password (or a password-only session stepping up) waiting for the second factor: who, since when (epoch ms), and where to go next. No one is signed in by it. */
    pendingFactor?: { uid: string; at: number; returnTo: string; first?: AuthenticationMethod[]; upstream?: UpstreamSignInRecord };
    /** The one-time-code secret being enrolled, until the person confirms it with a first code. */
    enrolSecret?: string;
    /** A sign-in sent to an upstream identity provider, until it comes back (issue 45). */
    upstream?: PendingUpstreamSignIn;
    /** A sign-out sent to an upstream's logout, until it comes back (issue 45). */
    upstreamSignOut?: PendingUpstreamSignOut;
  }
}

export type { AuthenticationMethod };

/**
 * The browser's login session: an encrypted, signed, HttpOnly cookie (@fastify/secure-session)
 * holding the user, the sign-in time, the CSRF token and the secret of a server-side session row.
 * The row is what makes sign-out real (OWASP ASVS 3.3.1): a copy of the cookie taken before
 * sign-out names an ended session and signs nobody in, on whichever instance it reaches.
 */
@Injectable()
export class LoginSession {
  constructor(
    private readonly users: UsersService,
    private readonly sessions: SessionsService,
    private readonly consents: ConsentsService,
    private readonly upstreamSessions: UpstreamSessionStore,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    @Inject(sessionConfig.KEY) private readonly config: SessionConfig,
  ) {}

  /**
   * Records that the authorization request `requestKey` asks for a sign-in now (nobody signed in,
   * prompt=login, select_account, max_age, id_token_hint). Kept in the encrypted cookie, so that
   * neither the query the browser comes back with nor a copied cookie can claim a sign-in that did
   * not happen after it.
   */
  askSignIn(request: FastifyRequest, requestKey: string): void {
    request.session.set('signInAsked', { request: requestKey, at: this.clock.now().getTime() });
  }

  /** Whether the person signed in after the request `requestKey` asked them to: that sign-in answers its prompt=login and max_age. */
  signedInSinceAsked(request: FastifyRequest, requestKey: string): boolean {
    const asked = request.session.get('signInAsked');
    const signedInAt = request.session.get('signedInAt');
    return asked?.request === requestKey && signedInAt !== undefined && signedInAt >= asked.at;
  }

  /** The request was answered: a later one with the same query asks again. */
  forgetSignInAsked(request: FastifyRequest): void {
    if (request.session.get('signInAsked') !== undefined) request.session.set('signInAsked', undefined);
  }

  /**
   * The logged-in user, or null when there is none, the session is older than
   * SESSION_TTL_SECONDS, or its server-side row has ended (sign-out, a password change, "sign out
   * everywhere else") or is gone (the user was deleted).
   */
  async currentUser(request: FastifyRequest): Promise<User | null> {
    const claim = this.claim(request);
    if (!claim || !(await this.sessions.isActive(claim.secret, claim.userId))) return null;
    return this.users.findById(claim.userId);
  }

  /**
   * currentUser for the authorization endpoint, with whether the person already allowed `clientId`
   * the whole of `scope`, and whether that client already signed them in through this session: one
   * database round trip instead of three (four with OpenID's record of the client; issue 47). Null
   * when currentUser would be, or when the person is deactivated.
   */
  async currentUserConsenting(request: FastifyRequest, clientId: string, scope: readonly string[]): Promise<SignedInPerson | null> {
    const claim = this.claim(request);
    return claim ? this.consents.signedInConsenting(this.sessions.rowId(claim.secret), claim.userId, clientId, scope) : null;
  }

  /** The session the cookie names and whose person, unless it names none or its sign-in is older than SESSION_TTL_SECONDS; the server-side row is not read here. */
  private claim(request: FastifyRequest): { secret: string; userId: string } | null {
    const uid = request.session.get('uid');
    const authTime = request.session.get('authTime');
    const sid = request.session.get('sid');
    if (!uid || !authTime || !sid) return null;
    if (this.nowSeconds() - authTime > this.config.ttlSeconds) return null;
    return { secret: sid, userId: uid };
  }

  /** When the signed-in person signed in (OpenID Connect's auth_time); call after currentUser found them. */
  authTime(request: FastifyRequest): Date | null {
    const authTime = request.session.get('authTime');
    return authTime ? new Date(authTime * 1000) : null;
  }

  /** How the signed-in person proved who they are (RFC 8176); sessions from before this was recorded used a password. */
  authenticationMethods(request: FastifyRequest): AuthenticationMethod[] {
    return request.session.get('amr') ?? ['pwd'];
  }

  /**
   * Notes that a client signed the person in through this session (an OpenID Connect authorization),
   * so that its end reaches the client (Back-Channel Logout 1.0); returns the session's public sid.
   * `recorded`: whether it was noted already, when currentUserConsenting said so.
   */
  async signedInto(request: FastifyRequest, clientId: string, recorded?: boolean): Promise<string | null> {
    const secret = request.session.get('sid');
    if (!secret) return null;
    return this.sessions.recordClient(secret, clientId, recorded);
  }

  /** The public sid of this browser's session, or null when it has none. */
  publicSessionId(request: FastifyRequest): string | null {
    const secret = request.session.get('sid');
    return secret ? this.sessions.publicId(secret) : null;
  }

  /**
   * Starts a fresh session for the user, with a new CSRF token (no value survives from before
   * login); a session this browser still had is ended first. `methods` is how the person proved
   * who they are (RFC 8176): a password unless a caller says otherwise. False, with nothing
   * changed, when the person is deactivated (issue 46). Every way of signing in (password, second
   * factor, passkey, upstream identity provider) comes here, so the session records its address
   * and device here, and the sign-in's audit events (issue 48: the person's security events, with
   * the address; a new device) are recorded in the session's own transaction: one more INSERT (in
   * the same group commit on SQLite; on PostgreSQL the two INSERTs share a transaction), small
   * beside the password's argon2id check. Whether the device is new comes back from the session's
   * INSERT itself (SessionStore.insert), so it costs no round trip.
   */
  async logIn(request: FastifyRequest, user: User, methods: readonly AuthenticationMethod[] = ['pwd'], upstream?: UpstreamSignInRecord): Promise<boolean> {
    const origin = { ip: request.ip, device: describeDevice(request.headers['user-agent']) };
    // Started first: a deactivated person (issue 46) gets no session, and the browser's stays as it was.
    const started = await this.sessions.start(user.id, origin, (manager, devices) => this.audit.recordAll(signInEvents(user.id, origin, methods, upstream?.idp, devices), manager));
    if (started === null) return false;
    const { secret, createdAt } = started;
    const previous = request.session.get('sid');
    if (previous) await this.sessions.end(previous);
    // The request that asked for this sign-in is what the person goes back to: it must see that it happened.
    const signInAsked = request.session.get('signInAsked');
    request.session.regenerate();
    if (signInAsked !== undefined) request.session.set('signInAsked', signInAsked);
    request.session.set('uid', user.id);
    request.session.set('authTime', Math.floor(createdAt.getTime() / 1000));
    request.session.set('signedInAt', createdAt.getTime());
    request.session.set('sid', secret);
    request.session.set('amr', [...methods]);
    if (upstream !== undefined) request.session.set('idp', upstream.idp);
    request.session.set('csrf', newCsrfToken());
    // Signed in upstream (issue 45): the session remembers from where, for logout in both directions.
    if (upstream !== undefined) {
      await this.upstreamSessions.record({ sessionId: this.sessions.rowId(secret), idpId: upstream.idp, subject: upstream.subject, upstreamSid: upstream.upstreamSid, logoutHint: upstream.logoutHint, createdAt });
    }
    return true;
  }

  /** The upstream identity provider the signed-in person came through, or null for a local sign-in. */
  signedInVia(request: FastifyRequest): string | null {
    return request.session.get('idp') ?? null;
  }

  /**
   * Step-up (OpenID Connect Core §3.1.2.1 acr_values, max_age): the signed-in person has just proved
   * another factor. The same session goes on, with its sid, so the clients signed in through it stay
   * signed in and no back-channel logout is sent; it now records both proofs (RFC 8176), and its
   * auth_time is the latest factor's. The server-side session keeps its own expiry.
   */
  raise(request: FastifyRequest, methods: readonly AuthenticationMethod[]): void {
    const now = this.clock.now().getTime();
    request.session.set('amr', [...new Set([...this.authenticationMethods(request), ...methods])]);
    request.session.set('authTime', Math.floor(now / 1000));
    request.session.set('signedInAt', now);
    this.forgetPendingSecondFactor(request);
  }

  /**
   * The password was right but the person has a second factor: remember who, for a short while,
   * without signing anyone in (no uid, no server-side session) until the code is checked.
   */
  awaitSecondFactor(request: FastifyRequest, user: User, returnTo: string, first: readonly AuthenticationMethod[] = ['pwd'], upstream?: UpstreamSignInRecord): void {
    request.session.set('pendingFactor', { uid: user.id, at: this.clock.now().getTime(), returnTo, first: [...first], upstream });
  }

  /** The person waiting for their second factor, where they go next and how they proved the first; null when none, or the wait (SECOND_FACTOR_WAIT_SECONDS) is over. */
  async pendingSecondFactor(request: FastifyRequest, maxAgeSeconds: number): Promise<{ user: User; returnTo: string; first: AuthenticationMethod[]; upstream?: UpstreamSignInRecord } | null> {
    const pending = request.session.get('pendingFactor');
    if (!pending || this.clock.now().getTime() - pending.at > maxAgeSeconds * 1000) return null;
    const user = await this.users.findById(pending.uid);
    return user ? { user, returnTo: pending.returnTo, first: pending.first ?? ['pwd'], upstream: pending.upstream } : null;
  }

  /** The sessions row of this browser's sign-in (the SHA-256 of the cookie's secret), or null when it has none. */
  sessionRowId(request: FastifyRequest): string | null {
    const secret = request.session.get('sid');
    return secret ? this.sessions.rowId(secret) : null;
  }

  forgetPendingSecondFactor(request: FastifyRequest): void {
    if (request.session.get('pendingFactor') !== undefined) request.session.set('pendingFactor', undefined);
  }

  /** Whether the signed-in person signed in within the last `seconds` (changing a factor asks for a recent sign-in). */
  signedInWithin(request: FastifyRequest, seconds: number): boolean {
    const signedInAt = request.session.get('signedInAt');
    return signedInAt !== undefined && this.clock.now().getTime() - signedInAt <= seconds * 1000;
  }

  /** The one-time-code secret being enrolled in this browser (kept in the encrypted cookie only), created when there is none. */
  enrolmentSecret(request: FastifyRequest, create: () => string): string {
    let secret = request.session.get('enrolSecret');
    if (!secret) {
      secret = create();
      request.session.set('enrolSecret', secret);
    }
    return secret;
  }

  forgetEnrolmentSecret(request: FastifyRequest): void {
    request.session.set('enrolSecret', undefined);
  }

  /** Issue 45: remembers, in the encrypted cookie only, what an upstream sign-in or sign-out must bring back. */
  holdUpstream<K extends 'upstream' | 'upstreamSignOut'>(request: FastifyRequest, key: K, value: NonNullable<SessionData[K]>): void {
    request.session.set(key, value);
  }

  /** What an upstream sign-in or sign-out held, taken out of the cookie: an answer is used once. */
  takeUpstream<K extends 'upstream' | 'upstreamSignOut'>(request: FastifyRequest, key: K): SessionData[K] | undefined {
    const held = request.session.get(key);
    if (held !== undefined) request.session.set(key, undefined);
    return held;
  }

  /** Ends the server-side session, then forgets it in the cookie. */
  async logOut(request: FastifyRequest): Promise<void> {
    const sid = request.session.get('sid');
    if (sid) await this.sessions.end(sid);
    request.session.regenerate();
    request.session.set('csrf', newCsrfToken());
  }

  /** The CSRF token for a form on this page, created with the session when there is none yet. */
  csrfToken(request: FastifyRequest): string {
    let token = request.session.get('csrf');
    if (!token) {
      token = newCsrfToken();
      request.session.set('csrf', token);
    }
    return token;
  }

  /** Whether a submitted form carries this session's CSRF token (constant-time comparison). */
  csrfMatches(request: FastifyRequest, submitted: unknown): boolean {
    const expected = request.session.get('csrf');
    return typeof submitted === 'string' && expected !== undefined && constantTimeEqual(submitted, expected);
  }

  private nowSeconds(): number {
    return Math.floor(this.clock.now().getTime() / 1000);
  }
}

function newCsrfToken(): string {
  return randomBytes(32).toString('base64url');
}
