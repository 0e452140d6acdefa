import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AccountsService } from '../accounts/accounts.service.js';
import type { InteractionOutcome } from '../auth/interaction/interaction-responder.js';
import { AuditService } from '../audit/audit.service.js';
import { mailConfig, type MailConfig } from '../config/mail.config.js';
import { UsersService } from '../users/users.service.js';
import { LINK_PURPOSE } from './email-link.entity.js';
import { describeLifetime, EmailLinks } from './email-links.service.js';
import { emailAddress, field, sameAddress, type EmailForm } from './email-forms.js';
import { EmailPages } from './email-pages.js';
import { EMAIL_ROUTES } from './email-routes.js';
import { EmailThrottle } from './email-throttle.js';
import { MAIL_SENDER, type MailSender } from './mail-sender.js';
import { PasswordForms } from './password-forms.js';

/**
 * A forgotten password (OWASP Forgot Password Cheat Sheet): the answer is the same page, status
 * and work whether an account has the address or not, throttled or not; the link works once, for
 * minutes; using it sets the password through AccountsService (every session ends), tells the
 * person by email, and signs nobody in: a person with a second factor still needs it.
 */
@Injectable()
export class PasswordResetFlow {
  constructor(
    private readonly links: EmailLinks,
    private readonly users: UsersService,
    private readonly accounts: AccountsService,
    private readonly audit: AuditService,
    private readonly throttle: EmailThrottle,
    private readonly pages: EmailPages,
    private readonly forms: PasswordForms,
    @Inject(MAIL_SENDER) private readonly mail: MailSender,
    @Inject(mailConfig.KEY) private readonly config: MailConfig,
  ) {}

  forgotPage(request: FastifyRequest, error?: string, email = ''): InteractionOutcome {
    if (!this.mail.enabled) return this.pages.mailOff();
    return this.pages.form(request, {
      title: 'Forgot your password?',
      action: EMAIL_ROUTES.forgot,
      submit: 'Send me a link',
      intro: ['Enter the email address of your account. If it has one, we send a link to choose a new password.'],
      fields: [{ name: 'email', label: 'Email address', type: 'email', autocomplete: 'email', value: email }],
      error,
      back: { href: '/login', label: 'Back to sign in' },
    });
  }

  async forgot(request: FastifyRequest, form: EmailForm): Promise<InteractionOutcome> {
    if (!this.mail.enabled) return this.pages.mailOff();
    const email = emailAddress(field(form, 'email'));
    if (!email) return this.forgotPage(request, 'Enter an email address, such as name@example.com.', field(form, 'email').slice(0, 254));
    const people = (await this.users.findByEmail(email)).filter((user) => user.active);
    // Unknown address: the same counters, the same hashing and INSERT (a link for nobody, never sent).
    const recipients = people.length > 0 ? people : [null];
    for (const user of recipients) {
      if (!(await this.throttle.allow('reset', email, user?.id ?? `address:${email.toLowerCase()}`))) continue;
      const link = await this.links.issue(LINK_PURPOSE.ResetPassword, user?.id ?? null, user?.email ?? email, this.config.resetSeconds);
      if (user) this.mail.sendLater({ template: 'reset-password', to: user.email as string, values: { username: user.username, link: link.url, expires: describeLifetime(this.config.resetSeconds) } });
    }
    return this.pages.message(200, {
      title: 'Check your inbox',
      status: `If an account uses ${email}, we sent it a link to choose a new password. It works once, for ${describeLifetime(this.config.resetSeconds)}.`,
      paragraphs: ['Nothing arrived? Look in your spam folder, or ask again in a few minutes.'],
      link: { href: '/login', label: 'Back to sign in' },
    });
  }

  async resetPage(request: FastifyRequest, token: unknown): Promise<InteractionOutcome> {
    if (!this.mail.enabled) return this.pages.mailOff();
    if (!(await this.links.peek(LINK_PURPOSE.ResetPassword, token))) return this.pages.invalidLink({ href: EMAIL_ROUTES.forgot, label: 'Ask for a new link' });
    return this.forms.passwordForm(request, { title: 'Choose a new password', action: EMAIL_ROUTES.reset, token: token as string, notes: RESET_NOTES });
  }

  async reset(request: FastifyRequest, form: EmailForm): Promise<InteractionOutcome> {
    if (!this.mail.enabled) return this.pages.mailOff();
    const token = field(form, 'token');
    const chosen = await this.forms.checkedPassword(form);
    if ('error' in chosen) return this.forms.passwordForm(request, { title: 'Choose a new password', action: EMAIL_ROUTES.reset, token, notes: RESET_NOTES, error: chosen.error });
    const link = await this.links.consume(LINK_PURPOSE.ResetPassword, token);
    const user = link?.userId ? await this.users.findById(link.userId) : null;
    // The address must still be the person's, and the person active: a deactivated person resets nothing into a working sign-in.
    if (!link || !user || !user.active || !sameAddress(user.email, link.email)) return this.pages.invalidLink({ href: EMAIL_ROUTES.forgot, label: 'Ask for a new link' });
    await this.accounts.setPassword(user.username, chosen.password);
    await this.audit.record({ actor: `user:${user.id}`, action: 'user.password_reset', subject: `user:${user.id}`, details: { by: 'email_link' } });
    this.mail.sendLater({ template: 'password-changed', to: link.email, values: { username: user.username } });
    return this.pages.message(200, {
      title: 'Your password was changed',
      status: 'Your new password is set, and you were signed out everywhere.',
      paragraphs: RESET_NOTES,
      link: { href: '/login', label: 'Sign in' },
    });
  }
}

const RESET_NOTES = [
  'If you use a second factor (one-time codes or a passkey), you still need it to sign in: a new password does not replace it.',
  'Recovery codes are for a lost second factor, not a lost password.',
];
