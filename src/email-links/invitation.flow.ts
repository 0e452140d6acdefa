import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AccountsService } from '../accounts/accounts.service.js';
import type { InteractionOutcome } from '../auth/interaction/interaction-responder.js';
import { AuditService } from '../audit/audit.service.js';
import { UsersService } from '../users/users.service.js';
import { LINK_PURPOSE } from './email-link.entity.js';
import { EmailLinks } from './email-links.service.js';
import { field, sameAddress, type EmailForm } from './email-forms.js';
import { EmailPages } from './email-pages.js';
import { EMAIL_ROUTES } from './email-routes.js';
import { MAIL_SENDER, type MailSender } from './mail-sender.js';
import { PasswordForms } from './password-forms.js';

/**
 * An invitation (users:invite, SCIM): the link sets the person's first password and proves their
 * address. It signs nobody in: the person signs in next, where a required second factor is
 * enrolled (MFA_REQUIRED, users:update --require-mfa), as at any first sign-in. Works without SMTP
 * too: the administrator may hand the link over (users:invite --print-link).
 */
@Injectable()
export class InvitationFlow {
  constructor(
    private readonly links: EmailLinks,
    private readonly users: UsersService,
    private readonly accounts: AccountsService,
    private readonly audit: AuditService,
    private readonly pages: EmailPages,
    private readonly forms: PasswordForms,
    @Inject(MAIL_SENDER) private readonly mail: MailSender,
  ) {}

  async page(request: FastifyRequest, token: unknown): Promise<InteractionOutcome> {
    const link = await this.links.peek(LINK_PURPOSE.Invite, token);
    const user = link?.userId ? await this.users.findById(link.userId) : null;
    if (!link || !user) return this.pages.invalidLink();
    return this.forms.passwordForm(request, { title: `Welcome to ${this.mail.serviceName}`, action: EMAIL_ROUTES.invitation, token: token as string, intro: [`Choose a password for your account ${user.username}.`] });
  }

  async accept(request: FastifyRequest, form: EmailForm): Promise<InteractionOutcome> {
    const token = field(form, 'token');
    const chosen = await this.forms.checkedPassword(form);
    if ('error' in chosen) return this.forms.passwordForm(request, { title: `Welcome to ${this.mail.serviceName}`, action: EMAIL_ROUTES.invitation, token, error: chosen.error });
    const link = await this.links.consume(LINK_PURPOSE.Invite, token);
    const user = link?.userId ? await this.users.findById(link.userId) : null;
    if (!link || !user || !user.active) return this.pages.invalidLink();
    await this.accounts.setPassword(user.username, chosen.password);
    // The link reached the address: it is the person's, as long as it is still the one invited.
    if (sameAddress(user.email, link.email) && !user.emailVerified) await this.users.updateProfile(user.username, { emailVerified: true });
    await this.audit.record({ actor: `user:${user.id}`, action: 'user.invitation_accepted', subject: `user:${user.id}`, details: { mail: this.mail.enabled } });
    return this.pages.message(200, {
      title: 'Your password is set',
      status: `You can now sign in as ${user.username}.`,
      paragraphs: ['If this server asks for a second factor, you set it up right after your first sign-in.'],
      link: { href: '/login', label: 'Sign in' },
    });
  }
}
