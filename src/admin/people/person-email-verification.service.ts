import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from '../../http/api-error.js';
import type { User } from '../../users/user.entity.js';
import { AdministratorProtection } from './administrator-protection.js';
import { INVITATION_SENDER, InvitationRefused, type InvitationSender } from './invitation-sender.js';
import type { PeopleAdministrator } from './people-administrator.js';

/**
 * A link confirming a person's current address (issue 48; users:verify-email), sent to that
 * address (audited as email.verification_sent): email_verified becomes true only if the address is
 * still the same when the link is used. The link is never returned, as for an invitation: it is a
 * credential, the address's alone. Whether the person has an address is the sender's check
 * (AccountEmails), the one the CLI meets too.
 */
@Injectable()
export class PersonEmailVerification {
  constructor(
    @Inject(INVITATION_SENDER) private readonly sender: InvitationSender,
    private readonly protection: AdministratorProtection,
  ) {}

  async send(by: PeopleAdministrator, target: User): Promise<{ email: string; expiresAt: string }> {
    await this.protection.assert(by, target, 'verify_email');
    try {
      return await this.sender.sendVerification(target, by);
    } catch (error) {
      if (error instanceof InvitationRefused) throw new ApiError(409, error.message, { error: 'conflict' });
      throw error;
    }
  }
}
