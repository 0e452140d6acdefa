import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

/** Where a sign-out sends the browser before `next`: an upstream's logout URL, or null when it has none to visit. */
export type SignOutRedirect = (request: FastifyRequest, sessionRowId: string, next: string) => Promise<string | null>;

/**
 * Sign-out in both directions (issue 45): after a session here ends, the browser may have to visit
 * the upstream identity provider that signed the person in (OpenID Connect RP-Initiated Logout,
 * SAML Single Logout) before it goes where the sign-out was going. The sign-out paths (auth/) ask
 * here; federation/ registers how, so that auth/ depends on no protocol (as SessionEndListeners).
 */
@Injectable()
export class SignOutRedirects {
  private readonly handlers: SignOutRedirect[] = [];

  register(handler: SignOutRedirect): void {
    this.handlers.push(handler);
  }

  /** Where the browser goes now: an upstream's logout URL that comes back to `next`, or `next` itself. */
  async through(request: FastifyRequest, sessionRowId: string | null, next: string): Promise<string> {
    if (sessionRowId === null) return next;
    for (const handler of this.handlers) {
      const location = await handler(request, sessionRowId, next);
      if (location !== null) return location;
    }
    return next;
  }
}
