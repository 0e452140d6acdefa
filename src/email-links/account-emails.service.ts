import { Inject, Injectable } from '@nestjs/common';
import { AuditService, type AuditActor } from '../audit/audit.service.js';
import { DeliveryRefused } from './delivery-refused.js';
import { Transactions } from '../database/transactions.js';
import { mailConfig, type MailConfig } from '../config/mail.config.js';
import type { User } from '../users/user.entity.js';
import { UsersService } from '../users/users.service.js';
import { LINK_PURPOSE } from './email-link.entity.js';
import { describeLifetime, EmailLinks } from './email-links.service.js';
import { MAIL_SENDER, type MailSender } from './mail-sender.js';

export interface LinkDelivery {
  username: string;
  email: string;
  /** Whether a message went to the address. */
  sent: boolean;
  expires_at: string;
  /** Only with printLink: for the administrator to hand over (SMTP off, or a person without mail). */
  link?: string;
}

/**
 * The links an administrator sends (users:invite, users:verify-email) and SCIM's invitations: a
 * message to the person's address, or, with printLink, the link for the administrator to hand over.
 */
@Injectable()
export class AccountEmails {
  constructor(
    private readonly users: UsersService,
    private readonly links: EmailLinks,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
    @Inject(MAIL_SENDER) private readonly mail: MailSender,
    @Inject(mailConfig.KEY) private readonly config: MailConfig,
  ) {}

  /**
   * Invites `username` at `email`: creates the person without a password if there is none yet
   * (else the person must have no password: an invitation sets the first one), sets the address
   * (unverified until the link is used), and sends a link to choose a password.
   */
  async invite(username: string, email: string, actor: AuditActor, options: { printLink?: boolean } = {}): Promise<LinkDelivery> {
    this.assertCanDeliver(options.printLink);
    let user = await this.users.findByUsername(username);
    if (user && user.passwordHash !== '') throw new DeliveryRefused('has_password', `${username} already has a password: they can use "Forgot your password?", or an administrator users:set-password.`);
    if (user && !user.active) throw new DeliveryRefused('user_inactive', `${username} is deactivated: reactivate them first.`);
    if (!user) {
      user = await this.transactions.run(async (manager) => {
        const created = await this.users.createWithoutPassword([username], { email }, manager);
        // createWithoutPassword picks another name when this one is invalid or taken: roll back instead.
        if (created.username !== username) throw new DeliveryRefused('username_taken', `"${username}" is not a valid username (letters, digits, . _ @ -) or was taken meanwhile.`);
        return created;
      });
    } else if (user.email !== email) {
      user = await this.users.updateProfile(username, { email });
    }
    return this.deliver(user, 'invite', actor, options.printLink);
  }

  /** SCIM (issue 46): a person created without a password gets an invitation (when SCIM_INVITE_WITHOUT_PASSWORD=true and email is set up); false when not sent. */
  async inviteProvisioned(user: User, actor: string): Promise<boolean> {
    if (!this.mail.enabled || !user.email || user.passwordHash !== '' || !user.active) return false;
    await this.deliver(user, 'invite', actor, false);
    return true;
  }

  /** A link to confirm the person's current address. */
  async sendVerification(username: string, actor: AuditActor, options: { printLink?: boolean } = {}): Promise<LinkDelivery> {
    this.assertCanDeliver(options.printLink);
    const user = await this.users.require(username);
    if (!user.email) throw new DeliveryRefused('no_email', `${username} has no email address (users:update --email).`);
    return this.deliver(user, 'verify', actor, options.printLink);
  }

  private async deliver(user: User, kind: 'invite' | 'verify', actor: AuditActor, printLink = false): Promise<LinkDelivery> {
    const email = user.email as string;
    const invite = kind === 'invite';
    const lifetime = invite ? this.config.invitationSeconds : this.config.verificationSeconds;
    const link = await this.links.issue(invite ? LINK_PURPOSE.Invite : LINK_PURPOSE.VerifyEmail, user.id, email, lifetime);
    const sent = !printLink && this.mail.enabled;
    if (sent) await this.mail.send({ template: invite ? 'invite' : 'verify-email', to: email, values: { username: user.username, link: link.url, expires: describeLifetime(lifetime) } });
    await this.audit.record({ actor, action: invite ? 'user.invited' : 'email.verification_sent', subject: `user:${user.id}`, details: { sent, printed: printLink } });
    return { username: user.username, email, sent, expires_at: link.expiresAt.toISOString(), ...(printLink ? { link: link.url } : {}) };
  }

  private assertCanDeliver(printLink: boolean | undefined): void {
    if (!printLink && !this.mail.enabled) throw new DeliveryRefused('mail_not_configured', 'Email is not set up (SMTP_URL): use --print-link and hand the link over yourself.');
  }
}
