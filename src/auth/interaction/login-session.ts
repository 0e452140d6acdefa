import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { randomBytes } from 'node:crypto';
import { Clock } from '../../common/clock.js';
import { constantTimeEqual } from '../../common/secrets.js';
import { sessionConfig, type SessionConfig } from '../../config/session.config.js';
import type { User } from '../../users/user.entity.js';
import { UsersService } from '../../users/users.service.js';

declare module '@fastify/secure-session' {
  interface SessionData {
    /** The logged-in user's id. */
    uid: string;
    /** When the user logged in, in epoch seconds. */
    authTime: number;
    /** Synchronizer token of the login and consent forms. */
    csrf: string;
  }
}

/**
 * The browser's login session. It lives entirely in an encrypted, signed, HttpOnly cookie
 * (@fastify/secure-session), so any instance behind the load balancer can serve the next request.
 */
@Injectable()
export class LoginSession {
  constructor(
    private readonly users: UsersService,
    private readonly clock: Clock,
    @Inject(sessionConfig.KEY) private readonly config: SessionConfig,
  ) {}

  /** The logged-in user, or null when there is none or the session is older than SESSION_TTL_SECONDS. */
  async currentUser(request: FastifyRequest): Promise<User | null> {
    const uid = request.session.get('uid');
    const authTime = request.session.get('authTime');
    if (!uid || !authTime) return null;
    if (this.nowSeconds() - authTime > this.config.ttlSeconds) return null;
    return this.users.findById(uid);
  }

  /** Starts a fresh session for the user, with a new CSRF token (no value survives from before login). */
  logIn(request: FastifyRequest, user: User): void {
    request.session.regenerate();
    request.session.set('uid', user.id);
    request.session.set('authTime', this.nowSeconds());
    request.session.set('csrf', newCsrfToken());
  }

  logOut(request: FastifyRequest): void {
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
