import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { LoginSession } from '../auth/interaction/login-session.js';
import type { InteractionOutcome } from '../auth/interaction/interaction-responder.js';
import { ACCOUNT_PAGE } from '../auth/interaction/login.service.js';
import { AuditService } from '../audit/audit.service.js';
import { mailConfig, type MailConfig } from '../config/mail.config.js';
import type { User } from '../users/user.entity.js';
import { UsersService } from '../users/users.service.js';
import { LINK_PURPOSE } from './email-link.entity.js';
import { describeLifetime, EmailLinks } from './email-links.service.js';
import { emailAddress, field, sameAddress, type EmailForm } from './email-forms.js';
import { EmailPages } from './email-pages.js';
import { EMAIL_ROUTES } from './email-routes.js';
import { EmailThrottle } from './email-throttle.js';
import { MAIL_SENDER, type MailSender } from './mail-sender.js';

/**
 * A person's own address, on the account page /account/email: a change is confirmed from the new
 * address before it takes effect (then it is verified), and the old address is told; and a link
 * that confirms the current address (email_verified, OpenID Connect Core §5.1).
 */
@Injectable()
export class EmailAddressFlow {
  constructor(
    private readonly session: LoginSession,
    private readonly links: EmailLinks,
    private readonly users: UsersService,
    private readonly audit: AuditService,
    private readonly throttle: EmailThrottle,
    private readonly pages: EmailPages,
    @Inject(MAIL_SENDER) private readonly mail: MailSender,
    @Inject(mailConfig.KEY) private readonly config: MailConfig,
  ) {}

  async accountPage(request: FastifyRequest, options: { error?: string; status?: number } = {}): Promise<InteractionOutcome> {
    if (!this.mail.enabled) return this.pages.mailOff();
    const user = await this.session.currentUser(request);
    if (!user) return { kind: 'redirect', status: 303, location: `/login?return_to=${encodeURIComponent(EMAIL_ROUTES.account)}` };
    const current = user.email ? `Your address is ${user.email} (${user.emailVerified ? 'confirmed' : 'not confirmed yet'}).` : 'Your account has no email address yet.';
    return this.pages.form(request, {
      title: 'Your email address',
      action: EMAIL_ROUTES.account,
      submit: user.email ? 'Change address' : 'Add address',
      intro: [current, 'We send a link to the new address; the change happens once you open it.'],
      fields: [{ name: 'email', label: 'New email address', type: 'email', autocomplete: 'email' }],
      hidden: [{ name: 'action', value: 'change' }],
      notes: user.email && !user.emailVerified ? [`To confirm ${user.email} instead, send the form with that same address.`] : [],
      error: options.error,
      status: options.status,
      back: { href: ACCOUNT_PAGE, label: 'Back to your account' },
    });
  }

  /** A new address: a confirmation to it, a notice to the old one; the same address, unconfirmed: a confirmation of it. */
  async change(request: FastifyRequest, form: EmailForm): Promise<InteractionOutcome> {
    if (!this.mail.enabled) return this.pages.mailOff();
    const user = await this.session.currentUser(request);
    if (!user) return { kind: 'redirect', status: 303, location: `/login?return_to=${encodeURIComponent(EMAIL_ROUTES.account)}` };
    const email = emailAddress(field(form, 'email'));
    if (!email) return this.accountPage(request, { error: 'Enter an email address, such as name@example.com.' });
    const confirmCurrent = sameAddress(user.email, email);
    if (confirmCurrent && user.emailVerified) return this.accountPage(request, { error: 'This is already your confirmed address.' });
    if (!(await this.throttle.allow('change', email, user.id))) return this.accountPage(request, { error: 'Too many messages were sent for this account. Try again later.', status: 429 });
    const expires = describeLifetime(this.config.verificationSeconds);
    if (confirmCurrent) {
      const link = await this.links.issue(LINK_PURPOSE.VerifyEmail, user.id, user.email as string, this.config.verificationSeconds);
      await this.mail.send({ template: 'verify-email', to: user.email as string, values: { username: user.username, link: link.url, expires } });
    } else {
      const link = await this.links.issue(LINK_PURPOSE.ChangeEmail, user.id, email, this.config.verificationSeconds);
      await this.mail.send({ template: 'change-email-confirm', to: email, values: { username: user.username, link: link.url, expires } });
      if (user.email) this.mail.sendLater({ template: 'change-email-notice', to: user.email, values: { username: user.username, email } });
      await this.audit.record({ actor: `user:${user.id}`, action: 'email.change_requested', subject: `user:${user.id}` });
    }
    return this.pages.message(200, { title: 'Check your inbox', status: `We sent a link to ${email}. It works once, for ${expires}.`, link: { href: ACCOUNT_PAGE, label: 'Back to your account' } });
  }

  async confirmPage(request: FastifyRequest, purpose: 'verify' | 'change', token: unknown): Promise<InteractionOutcome> {
    const link = await this.links.peek(purpose === 'verify' ? LINK_PURPOSE.VerifyEmail : LINK_PURPOSE.ChangeEmail, token);
    if (!link) return this.pages.invalidLink();
    return this.pages.form(request, {
      title: purpose === 'verify' ? 'Confirm your email address' : 'Confirm your new email address',
      action: purpose === 'verify' ? EMAIL_ROUTES.verify : EMAIL_ROUTES.confirmChange,
      submit: 'Confirm',
      intro: [`Confirm that ${link.email} is your address.`],
      hidden: [{ name: 'token', value: token as string }],
    });
  }

  async confirm(purpose: 'verify' | 'change', form: EmailForm): Promise<InteractionOutcome> {
    const link = await this.links.consume(purpose === 'verify' ? LINK_PURPOSE.VerifyEmail : LINK_PURPOSE.ChangeEmail, field(form, 'token'));
    const user = link?.userId ? await this.users.findById(link.userId) : null;
    if (!link || !user || !user.active) return this.pages.invalidLink();
    if (purpose === 'verify') return this.verified(user, link.email);
    await this.users.updateProfile(user.username, { email: link.email, emailVerified: true });
    await this.audit.record({ actor: `user:${user.id}`, action: 'email.changed', subject: `user:${user.id}` });
    return this.pages.message(200, { title: 'Your address was changed', status: `Your email address is now ${link.email}.`, link: { href: ACCOUNT_PAGE, label: 'Your account' } });
  }

  /** email_verified follows only while the address is the one the link was sent to. */
  private async verified(user: User, email: string): Promise<InteractionOutcome> {
    if (!sameAddress(user.email, email)) return this.pages.message(409, { title: 'Your address has changed', alert: `This link confirmed ${email}, which is no longer your account's address. Nothing was changed.`, link: { href: ACCOUNT_PAGE, label: 'Your account' } });
    await this.users.updateProfile(user.username, { emailVerified: true });
    await this.audit.record({ actor: `user:${user.id}`, action: 'email.verified', subject: `user:${user.id}` });
    return this.pages.message(200, { title: 'Address confirmed', status: `${email} is confirmed as your address.`, link: { href: ACCOUNT_PAGE, label: 'Your account' } });
  }
}
