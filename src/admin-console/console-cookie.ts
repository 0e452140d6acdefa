import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { appConfig, type AppConfig } from '../config/app.config.js';
import { ConsoleKeys } from './console-keys.js';

/** The console's own cookie, apart from the sign-in session's (latchkey_session): its lifetime and its sign-out are the console's. */
export const CONSOLE_COOKIE = 'latchkey_admin';
/** Sent only to the console's pages, never to the rest of the server. */
const COOKIE_PATH = '/admin';
/** What the sealed value is bound to (SealedBox's additional data): a value sealed for anything else does not open here. */
const BOUND_TO = 'latchkey admin console cookie v1';

/** An administrator's console session: the tokens the console calls the admin API with, and its clocks (epoch seconds). */
export interface ConsoleSessionState {
  /** The ID token's subject: a new sign-in as someone else starts a new session. */
  sub: string;
  accessToken: string;
  refreshToken?: string;
  /** For RP-Initiated Logout at sign-out (id_token_hint). */
  idToken?: string;
  /** When the access token expires. */
  expiresAt: number;
  /** When the administrator last proved who they are (the ID token's auth_time): re-authentication is measured from it. */
  authTime: number;
  /** When this console session began: it ends ADMIN_CONSOLE_MAX_AGE_SECONDS later. */
  startedAt: number;
  /** The last request: it ends ADMIN_CONSOLE_IDLE_SECONDS after. */
  seenAt: number;
  /** The synchronizer token of the console's forms. */
  csrf: string;
}

/** A sign-in sent to the authorization endpoint, until it comes back to /admin/callback. */
export interface PendingSignIn {
  state: string;
  nonce: string;
  codeVerifier: string;
  /** The console page to go back to. */
  returnTo: string;
  /** Asked with prompt=login and max_age=0, for a dangerous action. */
  reauthenticate: boolean;
  /** When it was sent (epoch seconds): a pending sign-in older than ten minutes is forgotten. */
  at: number;
}

/** What one page leaves for the next (post/redirect/get): a message, or a secret shown once. */
export interface Flash {
  notice?: string;
  /** Done, but not all of it (a person added whose invitation could not be sent): shown apart from a notice. */
  warning?: string;
  secret?: { clientId: string; secret: string };
}

export interface ConsoleCookieContents {
  session?: ConsoleSessionState;
  signIn?: PendingSignIn;
  flash?: Flash;
}

/**
 * Reads and writes the console's cookie: JSON sealed with AES-256-GCM (SealedBox) under keys every
 * instance derives alike (ConsoleKeys), HttpOnly, SameSite=Lax, Secure on an https issuer, for
 * /admin only, and kept only while the browser is open. It holds the administrator's tokens: the
 * session ends for every copy of the cookie, on every instance, when they are revoked (sign-out).
 */
@Injectable()
export class ConsoleCookie {
  constructor(
    private readonly keys: ConsoleKeys,
    @Inject(appConfig.KEY) private readonly app: AppConfig,
  ) {}

  /** The cookie's contents; empty when there is none, or it does not open (tampered, another key, another purpose). */
  async read(request: FastifyRequest): Promise<ConsoleCookieContents> {
    const sealed = request.cookies?.[CONSOLE_COOKIE];
    if (!sealed || sealed.length > 8192) return {};
    const opened = (await this.keys.cookieBox()).open(sealed, BOUND_TO);
    if (opened === undefined) return {};
    try {
      const contents = JSON.parse(opened) as unknown;
      return typeof contents === 'object' && contents !== null ? (contents as ConsoleCookieContents) : {};
    } catch {
      return {};
    }
  }

  /** Replaces the cookie (the last write of a response wins); nothing left in it deletes it. */
  async write(reply: FastifyReply, contents: ConsoleCookieContents): Promise<void> {
    const options = { path: COOKIE_PATH, httpOnly: true, sameSite: 'lax' as const, secure: this.app.issuer.startsWith('https:') };
    const kept = Object.fromEntries(Object.entries(contents).filter(([, value]) => value !== undefined));
    if (Object.keys(kept).length === 0) {
      reply.setCookie(CONSOLE_COOKIE, '', { ...options, maxAge: 0 });
      return;
    }
    reply.setCookie(CONSOLE_COOKIE, (await this.keys.cookieBox()).seal(JSON.stringify(kept), BOUND_TO), options);
  }
}
