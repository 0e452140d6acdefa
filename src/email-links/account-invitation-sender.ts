import { Injectable } from '@nestjs/common';
import { InvitationRefused, type InvitationSender } from '../admin/people/invitation-sender.js';
import type { AuditActor } from '../audit/audit.service.js';
import type { User } from '../users/user.entity.js';
import { AccountEmails } from './account-emails.service.js';
import { DeliveryRefused } from './delivery-refused.js';

/** The admin API's invitations (issue 48), sent as users:invite sends them, minus --print-link: the link is the person's alone. */
@Injectable()
export class AccountInvitationSender implements InvitationSender {
  constructor(private readonly emails: AccountEmails) {}

  async invite(user: User, email: string, actor: AuditActor): Promise<{ email: string; expiresAt: string }> {
    try {
      const sent = await this.emails.invite(user.username, email, actor);
      return { email: sent.email, expiresAt: sent.expires_at };
    } catch (error) {
      if (!(error instanceof DeliveryRefused)) throw error;
      // The CLI's wording names --print-link, which the API does not offer.
      throw new InvitationRefused(error.code === 'mail_not_configured' ? "Email is not set up on this server (SMTP_URL); the CLI's users:invite --print-link gives a link to hand over" : error.message);
    }
  }
}
