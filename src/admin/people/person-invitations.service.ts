import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from '../../http/api-error.js';
import type { User } from '../../users/user.entity.js';
import { AdministratorProtection } from './administrator-protection.js';
import { INVITATION_SENDER, InvitationRefused, type InvitationSender } from './invitation-sender.js';
import type { PeopleAdministrator } from './people-administrator.js';

/**
 * An invitation by email for a person who has no password yet (issue 48; users:invite): a link
 * to choose one, sent to their address (audited as user.invited). The link itself is never
 * returned: it opens the account, and only the address may receive it.
 */
@Injectable()
export class PersonInvitations {
  constructor(
    @Inject(INVITATION_SENDER) private readonly sender: InvitationSender,
    private readonly protection: AdministratorProtection,
  ) {}

  async invite(by: PeopleAdministrator, target: User): Promise<{ email: string; expiresAt: string }> {
    await this.protection.assert(by, target, 'invite');
    if (!target.email) throw new ApiError(409, `${target.username} has no email address: set one first (PATCH the person's email)`, { error: 'conflict' });
    try {
      return await this.sender.invite(target, target.email, by);
    } catch (error) {
      if (error instanceof InvitationRefused) throw new ApiError(409, error.message, { error: 'conflict' });
      throw error;
    }
  }
}
