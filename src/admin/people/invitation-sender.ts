import type { AuditActor } from '../../audit/audit.service.js';
import type { User } from '../../users/user.entity.js';

/**
 * What the admin API needs of the email links (issue 48): an invitation, or a link confirming the
 * address (users:verify-email), sent to a person's address.
 * A port, provided by email-links/ (AdminInvitationsModule) and handed to AdminApiModule by the
 * application: email-links/ builds on auth/, which builds on admin/, so admin/ cannot import it.
 */
export const INVITATION_SENDER = Symbol('INVITATION_SENDER');

export interface InvitationSender {
  /** Sends the person a link to choose their first password (audited as user.invited by `actor`); throws InvitationRefused when it cannot. */
  invite(user: User, email: string, actor: AuditActor): Promise<{ email: string; expiresAt: string }>;
  /** Sends the person a link confirming their current address (audited as email.verification_sent by `actor`); throws InvitationRefused when it cannot. */
  sendVerification(user: User, actor: AuditActor): Promise<{ email: string; expiresAt: string }>;
}

/** The message cannot be sent as asked (the person has a password or no address, is locked, or email is not set up): a conflict, with the reason. */
export class InvitationRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvitationRefused';
  }
}
