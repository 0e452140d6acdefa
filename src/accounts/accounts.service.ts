import { Injectable } from '@nestjs/common';
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
}
