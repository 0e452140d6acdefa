import { Injectable } from '@nestjs/common';
import { AuditService } from '../audit/audit.service.js';
import { Transactions } from '../database/transactions.js';
import { SessionsService } from '../sessions/sessions.service.js';
import type { User } from '../users/user.entity.js';
import { UsersService } from '../users/users.service.js';

/**
 * What happens to a person's account as a whole, across the person (users/) and their sign-in
 * sessions (sessions/), which know nothing of each other's rules.
 */
@Injectable()
export class AccountsService {
  constructor(
    private readonly users: UsersService,
    private readonly sessions: SessionsService,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
  ) {}

  /**
   * Sets a new password and ends every session of the person in the same transaction (OWASP ASVS
   * 3.3.3): whoever signed in with the old password is signed out on every instance.
   */
  async setPassword(username: string, password: string): Promise<User> {
    const passwordHash = await this.users.hashNewPassword(password);
    const user = await this.users.require(username);
    await this.transactions.run(async (manager) => {
      await this.users.storePasswordHash(user.id, passwordHash, manager);
      await this.sessions.endAllOf(user.id, { manager });
    });
    return Object.assign(user, { passwordHash });
  }

  /**
   * Deletes the person: their sessions end first, in the same transaction, so that applications
   * registered for back-channel logout are told (a cascade alone would end them silently); then
   * their codes, tokens, consents and sessions go with them (ON DELETE CASCADE). Audited.
   */
  async deleteUser(username: string, actor: string): Promise<void> {
    const user = await this.users.require(username);
    await this.transactions.run(async (manager) => {
      const ended = await this.sessions.endAllOf(user.id, { manager });
      await this.users.deleteWithin(user.id, manager);
      await this.audit.record({ actor, action: 'user.deleted', subject: `user:${user.id}`, details: { sessions_ended: ended } }, manager);
    });
  }

  /**
   * An administrator ends every session of the person (a lost laptop, a suspicion): they sign in
   * again everywhere, and the applications they signed in to are told (Back-Channel Logout).
   * Audited with the number of sessions ended, in the same transaction.
   */
  async signOutEverywhere(username: string, actor: string): Promise<number> {
    const user = await this.users.require(username);
    return this.transactions.run(async (manager) => {
      const ended = await this.sessions.endAllOf(user.id, { manager });
      await this.audit.record({ actor, action: 'user.signed_out_everywhere', subject: `user:${user.id}`, details: { sessions_ended: ended } }, manager);
      return ended;
    });
  }
}
