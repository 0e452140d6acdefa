import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { LoginSession } from '../auth/interaction/login-session.js';
import type { InteractionOutcome } from '../auth/interaction/interaction-responder.js';
import type { EmailForm } from './email-forms.js';
import { EmailPages } from './email-pages.js';

/** Every email form carries the session's CSRF token (RFC 6749 §10.12, as the sign-in form): without it, nothing runs. */
@Injectable()
export class CsrfCheck {
  constructor(
    private readonly session: LoginSession,
    private readonly pages: EmailPages,
  ) {}

  guard(request: FastifyRequest, form: EmailForm, retry: string, work: () => Promise<InteractionOutcome>): Promise<InteractionOutcome> {
    return this.session.csrfMatches(request, form?.csrf_token) ? work() : Promise.resolve(this.pages.expiredForm(retry));
  }
}
