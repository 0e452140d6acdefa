import { Injectable } from '@nestjs/common';
import { InvitationRefused, type InvitationSender } from '../admin/people/invitation-sender.js';
import type { AuditActor } from '../audit/audit.service.js';
import type { User } from '../users/user.entity.js';
import { AccountEmails, type LinkDelivery } from './account-emails.service.js';
import { DeliveryRefused } from './delivery-refused.js';

/**
 * The admin API's invitations and address verifications (issue 48), sent as users:invite and
 * users:verify-email send them, minus --print-link: the link is the person's alone.
 */
@Injectable()
export class AccountInvitationSender implements InvitationSender {
  constructor(private readonly emails: AccountEmails) {}

  async invite(user: User, email: string, actor: AuditActor): Promise<{ email: string; expiresAt: string }> {
    return delivered(() => this.emails.invite(user.username, email, actor), 'users:invite');
  }

  async sendVerification(user: User, actor: AuditActor): Promise<{ email: string; expiresAt: string }> {
    return delivered(() => this.emails.sendVerification(user.username, actor), 'users:verify-email');
  }
}

/** The delivery's address and expiry; a refusal as InvitationRefused, in the API's words. */
async function delivered(send: () => Promise<LinkDelivery>, command: string): Promise<{ email: string; expiresAt: string }> {
  try {
    const sent = await send();
    return { email: sent.email, expiresAt: sent.expires_at };
  } catch (error) {
    if (!(error instanceof DeliveryRefused)) throw error;
    // The CLI's wording names its own flags (--print-link, which the API does not offer; users:update --email).
    if (error.code === 'mail_not_configured') throw new InvitationRefused(`Email is not set up on this server (SMTP_URL); the CLI's ${command} --print-link gives a link to hand over`);
    if (error.code === 'no_email') throw new InvitationRefused("The person has no email address: set one first (PATCH the person's email)");
    throw new InvitationRefused(error.message);
  }
}
