import { Injectable } from '@nestjs/common';
import { DomainError } from '../../common/domain-error.js';
import { AccessWithdrawalService } from '../../consents/access-withdrawal.service.js';
import { SessionsService } from '../../sessions/sessions.service.js';
import type { User } from '../../users/user.entity.js';
import { AdministratorProtection } from './administrator-protection.js';
import type { PeopleAdministrator } from './people-administrator.js';
import { SessionDirectory } from './session-directory.service.js';
import { grantView, sessionView } from './person-views.js';

export type SessionView = ReturnType<typeof sessionView>;
export type GrantView = ReturnType<typeof grantView>;

/**
 * A person's sessions and the applications holding access to their data, as an administrator sees
 * them (issue 48), and an application's access withdrawn for them: what the person does on the
 * account's access page, through the same service (the consent goes, that client's tokens and
 * codes for the person die in the same transaction), audited with the administrator as actor.
 */
@Injectable()
export class PersonAccess {
  constructor(
    private readonly sessions: SessionsService,
    private readonly directory: SessionDirectory,
    private readonly withdrawal: AccessWithdrawalService,
    private readonly protection: AdministratorProtection,
  ) {}

  /** Up to `limit` live sessions, newest first, after the session `after` (its created_at and id). */
  async sessionsOf(user: User, limit: number, after: { createdAt: Date; publicId: string } | null): Promise<SessionView[]> {
    const sessions = await this.sessions.livePageOf(user.id, limit, after);
    const names = await this.directory.clientNames(sessions.flatMap(({ clients }) => clients));
    return sessions.map((session) => sessionView(session, names));
  }

  /** Up to `limit` applications holding access, by client id after `afterClientId`. */
  async grantsOf(user: User, limit: number, afterClientId: string | null): Promise<GrantView[]> {
    return (await this.withdrawal.page(user.id, limit, afterClientId)).map(grantView);
  }

  /** Withdraws the application's access (audited as consent.withdrawn); grant_not_found, with nothing changed, when it holds none. */
  async withdraw(by: PeopleAdministrator, target: User, clientId: string): Promise<void> {
    await this.protection.assert(by, target, 'withdraw_grant');
    const granted = (await this.withdrawal.list(target.id)).some((grant) => grant.clientId === clientId);
    if (!granted) throw new DomainError('grant_not_found', `${target.username} has granted no access to a client "${clientId}"`);
    await this.withdrawal.withdraw(target.id, clientId, by);
  }
}
