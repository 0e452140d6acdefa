import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { validate as isUuid } from 'uuid';
import { AccountsService } from '../../accounts/accounts.service.js';
import { AuditService } from '../../audit/audit.service.js';
import { DomainError } from '../../common/domain-error.js';
import { Transactions } from '../../database/transactions.js';
import { isUniqueViolation } from '../../database/unique-violation.js';
import { FactorRecords } from '../../factors/factor-records.service.js';
import type { User } from '../../users/user.entity.js';
import { validateProfile, type ProfileChanges } from '../../users/user-profile.js';
import { UsersService } from '../../users/users.service.js';
import { AdministratorProtection, type PersonOperation } from './administrator-protection.js';
import type { PeopleAdministrator } from './people-administrator.js';

/** The audit events this service records itself; the others are recorded where the change is made (accounts/, factors/). */
export const PEOPLE_AUDIT = {
  created: 'user.created',
  updated: 'user.updated',
  passwordSet: 'user.password_set',
} as const;

/** The profile attributes by their wire names, for the audit event's list of what changed. */
const WIRE_NAMES: Record<keyof ProfileChanges, string> = { email: 'email', emailVerified: 'email_verified', name: 'name', givenName: 'given_name', familyName: 'family_name', requireMfa: 'require_mfa' };

export interface NewPerson {
  username: string;
  /** None: the person has no password until invited or given one. */
  password?: string;
  profile: ProfileChanges;
}

/**
 * What an administrator does to a person (issue 48), for the CLI's users:* commands and the admin
 * API alike, so that each rule (AdministratorProtection) and each audit event lives once. Every
 * change is audited with who made it and from where (PeopleAdministrator: the audit actor and ip).
 */
@Injectable()
export class AccountAdministration {
  constructor(
    private readonly users: UsersService,
    private readonly accounts: AccountsService,
    private readonly factors: FactorRecords,
    private readonly protection: AdministratorProtection,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
  ) {}

  /** A new person (audited as user.created); the password is hashed before the transaction opens. */
  async create(by: PeopleAdministrator, input: NewPerson): Promise<User> {
    const user = await this.users.prepareNew(input.username, input.password, input.profile);
    try {
      return await this.transactions.run(async (manager) => {
        const saved = await this.users.insertWithin(user, manager);
        await this.audit.record({ actor: by, action: PEOPLE_AUDIT.created, subject: `user:${user.id}`, details: { username: user.username, password: input.password !== undefined } }, manager);
        return saved;
      });
    } catch (error) {
      // Two administrators creating the same name at once: the unique index decides.
      if (isUniqueViolation(error)) throw new DomainError('username_taken', `A user named "${input.username}" already exists.`);
      throw error;
    }
  }

  /** Changes the profile (audited as user.updated, naming the attributes changed, never their values). */
  async update(by: PeopleAdministrator, target: User, changes: ProfileChanges): Promise<User> {
    await this.protection.assert(by, target, 'update');
    validateProfile(changes); // before the transaction: a refusal thrown inside it would roll back its neighbours
    const changed = (Object.keys(WIRE_NAMES) as (keyof ProfileChanges)[]).filter((key) => changes[key] !== undefined).map((key) => WIRE_NAMES[key]);
    return this.transactions.run(async (manager) => {
      const updated = await this.users.applyProfile(target, changes, manager);
      await this.audit.record({ actor: by, action: PEOPLE_AUDIT.updated, subject: `user:${target.id}`, details: { changed } }, manager);
      return updated;
    });
  }

  /** Sets the password; every session of the person ends with it (AccountsService). Audited as user.password_set. */
  async setPassword(by: PeopleAdministrator, target: User, password: string): Promise<void> {
    await this.protection.assert(by, target, 'set_password');
    const passwordHash = await this.users.hashNewPassword(password);
    await this.transactions.run(async (manager) => {
      const ended = await this.accounts.setPasswordWithin(target.id, passwordHash, manager);
      await this.audit.record({ actor: by, action: PEOPLE_AUDIT.passwordSet, subject: `user:${target.id}`, details: { sessions_ended: ended } }, manager);
    });
  }

  /** users:mfa-reset: every second factor goes (audited as factor.removed). */
  async resetFactors(by: PeopleAdministrator, target: User): Promise<{ totp: boolean; recoveryCodes: number; passkeys: number }> {
    await this.protection.assert(by, target, 'reset_factors');
    return this.factors.removeAll(target.id, by);
  }

  /** users:passkey-remove: one passkey of the person (audited as passkey.removed); passkey_not_found when it is not theirs. */
  async removePasskey(by: PeopleAdministrator, target: User, passkeyId: string): Promise<void> {
    await this.protection.assert(by, target, 'remove_passkey');
    if (!(await this.factors.removePasskey(target.id, passkeyId, by))) {
      throw new DomainError('passkey_not_found', `${target.username} has no passkey ${passkeyId} (users:show lists their passkeys' ids)`);
    }
  }

  /** users:deactivate: sessions end, tokens are revoked, sign-in is refused (audited as user.deactivated). */
  lock(by: PeopleAdministrator, target: User): Promise<{ sessionsEnded: number; tokensRevoked: number }> {
    return this.checkedWithin(by, target, 'lock', (manager) => this.accounts.deactivateWithin(target, by, manager));
  }

  /** users:reactivate (audited as user.reactivated). */
  async unlock(by: PeopleAdministrator, target: User): Promise<void> {
    await this.protection.assert(by, target, 'unlock');
    await this.accounts.reactivate(target.id, by);
  }

  /** users:delete: sessions end first (back-channel logout), then the person and all that is theirs (audited as user.deleted). */
  delete(by: PeopleAdministrator, target: User): Promise<void> {
    return this.checkedWithin(by, target, 'delete', (manager) => this.accounts.deleteUserWithin(target, by, manager));
  }

  /** users:sign-out: every session ends, through the sessions' end listeners (audited as user.signed_out_everywhere). */
  async endSessions(by: PeopleAdministrator, target: User): Promise<number> {
    await this.protection.assert(by, target, 'end_sessions');
    return this.transactions.run((manager) => this.accounts.signOutEverywhereWithin(target, by, manager));
  }

  /** One session, by the public id the admin API lists (audited as session.ended); session_not_found when no live session of theirs has it. */
  async endSession(by: PeopleAdministrator, target: User, sessionId: string): Promise<void> {
    await this.protection.assert(by, target, 'end_sessions');
    // The same service as the person's own account page, so that one rule and one audit event (session.ended) serve both.
    const ended = isUuid(sessionId) && (await this.accounts.endSession(target.id, sessionId, by));
    if (!ended) throw new DomainError('session_not_found', `${target.username} has no live session ${sessionId}`);
  }

  /** `work` in one transaction with the protection's check (which counts the owners there), the refusal thrown once it has rolled back nothing. */
  private async checkedWithin<T>(by: PeopleAdministrator, target: User, operation: PersonOperation, work: (manager: EntityManager) => Promise<T>): Promise<T> {
    const outcome = await this.transactions.run(async (manager): Promise<{ refused: DomainError } | { done: T }> => {
      const refused = await this.protection.refusal(by, target, operation, manager);
      return refused ? { refused } : { done: await work(manager) };
    });
    if ('refused' in outcome) throw outcome.refused;
    return outcome.done;
  }
}
