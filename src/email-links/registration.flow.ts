import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AccountsService } from '../accounts/accounts.service.js';
import type { InteractionOutcome } from '../auth/interaction/interaction-responder.js';
import { AuditService } from '../audit/audit.service.js';
import { mailConfig, type MailConfig } from '../config/mail.config.js';
import { Transactions } from '../database/transactions.js';
import { clientAddress } from '../rate-limit/client-address.js';
import { UsersService } from '../users/users.service.js';
import { LINK_PURPOSE } from './email-link.entity.js';
import { describeLifetime, EmailLinks } from './email-links.service.js';
import { emailAddress, field, sameAddress, type EmailForm } from './email-forms.js';
import { EmailPages } from './email-pages.js';
import { EMAIL_ROUTES } from './email-routes.js';
import { EmailThrottle } from './email-throttle.js';
import { MAIL_SENDER, type MailSender } from './mail-sender.js';
import { PasswordForms } from './password-forms.js';

/** As UsersService checks it. */
const USERNAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

/**
 * Self-registration (SELF_REGISTRATION=on, off by default): an address at an allowed domain, the
 * same password rules; the account is created inactive (active = false, so no sign-in of any kind
 * works) and becomes active when the link sent to the address is used. An address that already
 * has an account gets a notice instead, behind the same answer.
 */
@Injectable()
export class RegistrationFlow {
  constructor(
    private readonly links: EmailLinks,
    private readonly users: UsersService,
    private readonly accounts: AccountsService,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
    private readonly throttle: EmailThrottle,
    private readonly pages: EmailPages,
    private readonly forms: PasswordForms,
    @Inject(MAIL_SENDER) private readonly mail: MailSender,
    @Inject(mailConfig.KEY) private readonly config: MailConfig,
  ) {}

  page(request: FastifyRequest, values: { username?: string; email?: string; error?: string } = {}): InteractionOutcome {
    if (!this.config.selfRegistration || !this.mail.enabled) return this.off();
    const domains = this.config.registrationDomains;
    return this.pages.form(request, {
      title: 'Create an account',
      action: EMAIL_ROUTES.register,
      submit: 'Create account',
      intro: domains.length > 0 ? [`With an address at ${domains.join(', ')}.`] : [],
      fields: [
        { name: 'username', label: 'Username', type: 'text', autocomplete: 'username', value: values.username },
        { name: 'email', label: 'Email address', type: 'email', autocomplete: 'email', value: values.email },
        { name: 'password', label: 'Password', type: 'password', autocomplete: 'new-password' },
        { name: 'password_confirm', label: 'Password again', type: 'password', autocomplete: 'new-password' },
      ],
      notes: ['We send a link to your address: the account works once you open it.'],
      error: values.error,
      back: { href: '/login', label: 'Back to sign in' },
    });
  }

  async register(request: FastifyRequest, form: EmailForm): Promise<InteractionOutcome> {
    if (!this.config.selfRegistration || !this.mail.enabled) return this.off();
    const username = field(form, 'username').trim();
    const email = emailAddress(field(form, 'email'));
    const again = (error: string) => this.page(request, { username: username.slice(0, 64), email: field(form, 'email').slice(0, 254), error });
    if (!USERNAME.test(username)) return again('Choose a username of 1 to 64 letters, digits, and . _ @ - (not first).');
    if (!email) return again('Enter an email address, such as name@example.com.');
    const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
    if (this.config.registrationDomains.length > 0 && !this.config.registrationDomains.includes(domain)) return again(`Accounts here are for addresses at ${this.config.registrationDomains.join(', ')}.`);
    const chosen = await this.forms.checkedPassword(form);
    if ('error' in chosen) return again(chosen.error);
    if (await this.users.findByUsername(username)) return again(`The username ${username} is taken. Choose another one.`);
    const answer = this.pages.message(200, { title: 'Check your inbox', status: `We sent a message to ${email}. Open the link in it to finish creating your account.`, link: { href: '/login', label: 'Back to sign in' } });
    if (!(await this.throttle.allow('register', email, `address:${clientAddress(request)}`))) return answer;
    const existing = (await this.users.findByEmail(email)).length > 0;
    if (existing) {
      this.mail.sendLater({ template: 'register-exists', to: email, values: { link: `${this.links.issuer}/login` } });
      return answer;
    }
    const passwordHash = await this.users.hashNewPassword(chosen.password);
    const created = await this.transactions.run(async (manager) => {
      const user = await this.users.createWithoutPassword([username], { email }, manager);
      if (user.username !== username) return null;
      await this.users.setActive(user.id, false, manager);
      await this.users.storePasswordHash(user.id, passwordHash, manager);
      return { user, link: await this.links.issue(LINK_PURPOSE.Register, user.id, email, this.config.verificationSeconds, manager) };
    });
    if (!created) return again(`The username ${username} is taken. Choose another one.`);
    this.mail.sendLater({ template: 'register-verify', to: email, values: { username, link: created.link.url, expires: describeLifetime(this.config.verificationSeconds) } });
    await this.audit.record({ actor: `user:${created.user.id}`, action: 'user.registered', subject: `user:${created.user.id}`, details: { verified: false } });
    return answer;
  }

  async confirmPage(request: FastifyRequest, token: unknown): Promise<InteractionOutcome> {
    const link = await this.links.peek(LINK_PURPOSE.Register, token);
    if (!link) return this.pages.invalidLink();
    return this.pages.form(request, { title: 'Finish creating your account', action: EMAIL_ROUTES.registerConfirm, submit: 'Confirm my address', intro: [`Confirm that ${link.email} is your address.`], hidden: [{ name: 'token', value: token as string }] });
  }

  async confirm(form: EmailForm): Promise<InteractionOutcome> {
    const link = await this.links.consume(LINK_PURPOSE.Register, field(form, 'token'));
    const user = link?.userId ? await this.users.findById(link.userId) : null;
    if (!link || !user || !sameAddress(user.email, link.email)) return this.pages.invalidLink();
    await this.users.updateProfile(user.username, { emailVerified: true });
    await this.accounts.reactivate(user.id, `user:${user.id}`);
    await this.audit.record({ actor: `user:${user.id}`, action: 'user.registration_confirmed', subject: `user:${user.id}` });
    return this.pages.message(200, { title: 'Your account is ready', status: `You can now sign in as ${user.username}.`, paragraphs: ['If this server asks for a second factor, you set it up right after your first sign-in.'], link: { href: '/login', label: 'Sign in' } });
  }

  private off(): InteractionOutcome {
    return this.pages.message(404, { title: 'Registration is closed', alert: 'This server does not let people create their own accounts. Ask your administrator for one.', link: { href: '/login', label: 'Back to sign in' } });
  }
}
