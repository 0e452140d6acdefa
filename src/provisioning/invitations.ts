import { Injectable, Logger } from '@nestjs/common';
import { AccountEmails } from '../email-links/account-emails.service.js';
import type { User } from '../users/user.entity.js';

/** How a person a directory created without a password is invited (SCIM_INVITE_WITHOUT_PASSWORD). */
export const SCIM_INVITATIONS = Symbol('SCIM_INVITATIONS');

export interface ScimInvitations {
  /** Sends the person a link to choose a password; never throws for a delivery problem (the person exists either way). */
  invite(user: User, actor: string): Promise<void>;
}

/**
 * Invitations by email (email-links/): a single-use link to set a password, then the usual
 * sign-in, where a required second factor is enrolled. Without SMTP, or for a person with no
 * address, nothing is sent and the log says so; an administrator can hand over a link
 * (`users:invite --print-link`).
 */
@Injectable()
export class EmailInvitations implements ScimInvitations {
  private readonly logger = new Logger('ScimInvitations');

  constructor(private readonly emails: AccountEmails) {}

  async invite(user: User, actor: string): Promise<void> {
    try {
      if (!(await this.emails.inviteProvisioned(user, actor))) this.logger.warn(`${user.id} was provisioned without a password and not invited: email is not set up (SMTP_URL)`);
    } catch (error) {
      this.logger.error(`The invitation of ${user.id} could not be sent: ${(error as Error).message}`);
    }
  }
}
