import { Injectable } from '@nestjs/common';
import { Eta } from 'eta';
import { join } from 'node:path';
import type { FastifyRequest } from 'fastify';
import { LoginSession } from '../auth/interaction/login-session.js';
import type { InteractionOutcome } from '../auth/interaction/interaction-responder.js';
import { ACCOUNT_PAGE } from '../auth/interaction/login.service.js';
import { PROJECT_ROOT } from '../common/project-root.js';
import { FORM_TEMPLATE, MESSAGE_TEMPLATE } from './email-page-templates.js';

export interface FormField {
  name: string;
  label: string;
  type: 'email' | 'password' | 'text';
  autocomplete: string;
  /** Never for a password. */
  value?: string;
}

export interface FormPage {
  title: string;
  action: string;
  submit: string;
  intro?: string[];
  fields?: FormField[];
  hidden?: { name: string; value: string }[];
  notes?: string[];
  error?: string;
  back?: { href: string; label: string };
  status?: number;
}

export interface MessagePage {
  title: string;
  paragraphs?: string[];
  /** A problem: shown as an alert. */
  alert?: string;
  /** A done thing: announced politely to screen readers. */
  status?: string;
  link?: { href: string; label: string };
}

/** The email pages: a form (with the session's CSRF token), or a message; the layout is the other pages'. */
@Injectable()
export class EmailPages {
  private readonly eta = new Eta({ views: join(PROJECT_ROOT, 'views'), cache: true, autoEscape: true, autoTrim: false });

  constructor(private readonly session: LoginSession) {
    this.eta.loadTemplate('@email-form', FORM_TEMPLATE);
    this.eta.loadTemplate('@email-message', MESSAGE_TEMPLATE);
  }

  form(request: FastifyRequest, page: FormPage): InteractionOutcome {
    const html = this.eta.render('@email-form', { ...page, intro: page.intro ?? [], fields: page.fields ?? [], hidden: page.hidden ?? [], notes: page.notes ?? [], csrfToken: this.session.csrfToken(request) });
    return { kind: 'page', page: { status: page.status ?? (page.error ? 400 : 200), html, formTargets: [] } };
  }

  message(status: number, page: MessagePage): InteractionOutcome {
    const html = this.eta.render('@email-message', { ...page, paragraphs: page.paragraphs ?? [] });
    return { kind: 'page', page: { status, html, formTargets: [] } };
  }

  /**
   * A link that is unknown, used or expired: one page for all three (which it was tells an attacker
   * nothing useful either). Without a way to ask again, the way on is the account page (or, signed
   * out, the sign-in form that leads there), never a dead end.
   */
  invalidLink(retry?: { href: string; label: string }): InteractionOutcome {
    return this.message(400, {
      title: 'This link no longer works',
      alert: 'This link was already used, has expired, or is not complete. Each link works once, for a limited time.',
      paragraphs: retry ? [] : ['If you already used it, there is nothing more to do. Otherwise, ask for a new link from where you got this one.'],
      link: retry ?? { href: ACCOUNT_PAGE, label: 'Go to your account' },
    });
  }

  /** The routes answer this without SMTP_URL: the feature is off, and says so. */
  mailOff(): InteractionOutcome {
    return this.message(404, { title: 'Email is not set up', alert: 'This server does not send email, so this page is not available. Ask your administrator for help.', link: { href: '/login', label: 'Back to sign in' } });
  }

  /** A form posted without this session's CSRF token, or from another site. */
  expiredForm(retry: string): InteractionOutcome {
    return this.message(403, { title: 'Request refused', alert: 'This form has expired or was not sent from this site. Please try again.', link: { href: retry, label: 'Start again' } });
  }
}
