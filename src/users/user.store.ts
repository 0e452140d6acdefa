import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { CHANGE_CHANNELS } from '../database/change-channels.js';
import { ChangeNotifications } from '../database/change-notifications.js';
import { EntityRows } from '../database/entity-rows.js';
import { EVERY_ROW } from '../database/notified-cache.js';
import { PreparedStatement } from '../database/prepared-statement.js';
import { Transactions } from '../database/transactions.js';
import { User } from './user.entity.js';

/** The users table. Writes go through Transactions, or the caller's manager when part of a larger change. */
@Injectable()
export class UserStore {
  private readonly rows: EntityRows<User>;
  // Prepared: every signed-in page, every code redeemed and every userinfo request reads the person by id (GET /authorize reads them with its session: ConsentStore.signedIn).
  private readonly byId: PreparedStatement<Record<string, unknown>>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
    private readonly notifications: ChangeNotifications,
  ) {
    this.rows = new EntityRows(dataSource.getMetadata(User));
    this.byId = new PreparedStatement(dataSource, 'latchkey_user_by_id', `SELECT ${this.rows.selectList} FROM ${this.rows.table} WHERE "id" = ?`);
  }

  async findById(id: string): Promise<User | null> {
    const row = await this.byId.one(id);
    return row ? this.rows.decode(row) : null;
  }

  findByUsername(username: string): Promise<User | null> {
    return this.dataSource.manager.findOneBy(User, { username });
  }

  /**
   * The people with this address, compared without case (RFC 5321 §2.4 lets the local part differ
   * by case, but no provider we know of does): a forgotten password, a registration.
   */
  findByEmail(email: string): Promise<User[]> {
    return this.dataSource.manager.createQueryBuilder(User, 'user').where('LOWER(user.email) = :email', { email: email.toLowerCase() }).getMany();
  }

  exists(username: string): Promise<boolean> {
    return this.dataSource.manager.existsBy(User, { username });
  }

  list(): Promise<User[]> {
    return this.dataSource.manager.find(User, { order: { username: 'ASC' } });
  }

  /** A new user, as stored (created_at filled in). */
  insert(user: User, manager?: EntityManager): Promise<User> {
    return manager ? manager.save(user) : this.transactions.write((within) => within.save(user));
  }

  async storePasswordHash(userId: string, passwordHash: string, manager: EntityManager): Promise<void> {
    await manager.update(User, { id: userId }, { passwordHash });
  }

  /** Changes profile attributes; the others stay as they are. */
  async updateProfile(userId: string, changes: Partial<Pick<User, 'email' | 'emailVerified' | 'name' | 'givenName' | 'familyName' | 'requireMfa'>>, manager?: EntityManager): Promise<void> {
    const work = (within: EntityManager) => within.update(User, { id: userId }, changes);
    await (manager ? work(manager) : this.transactions.write(work));
  }

  /**
   * Deactivates or reactivates the person in the caller's transaction (issue 46). Sessions are
   * started only for an active person (SessionStore.insert's gate), so a sign-in that races a
   * deactivation starts nothing once this commits. updated_at moves: SCIM's meta.lastModified and
   * ETag follow it.
   */
  async setActive(userId: string, active: boolean, manager: EntityManager): Promise<boolean> {
    const result = await manager.update(User, { id: userId }, { active });
    return (result.affected ?? 0) > 0;
  }

  /**
   * Deletes the user; their codes, tokens, consents and sessions go with them (ON DELETE CASCADE).
   * Their access tokens may be kept by this instance, by a hash this statement never sees: all kept
   * tokens go once it commits (ChangeNotifications.committing), as the other instances drop them on
   * the tokens table's notifications.
   */
  async delete(userId: string, manager?: EntityManager): Promise<void> {
    const work = async (within: EntityManager): Promise<void> => {
      await within.delete(User, { id: userId });
      this.notifications.committing(within, CHANGE_CHANNELS.tokens, EVERY_ROW);
    };
    await (manager ? work(manager) : this.transactions.write(work));
  }

  /** SCIM's userName is case-insensitive (RFC 7643 §4.1.1): the person whose username matches regardless of case. */
  findByUsernameIgnoringCase(username: string): Promise<User | null> {
    return this.dataSource.manager.createQueryBuilder(User, 'user').where('LOWER(user.username) = LOWER(:username)', { username }).getOne();
  }

  /** A directory's change to the person (SCIM, issue 46), in the caller's transaction; updated_at moves (SCIM's meta.lastModified). */
  async updateProvisioned(userId: string, changes: ProvisionedUserChanges, manager: EntityManager): Promise<void> {
    await manager.update(User, { id: userId }, { ...changes, updatedAt: new Date() });
  }
}

/** What a directory may change on a person (SCIM, issue 46). */
export type ProvisionedUserChanges = Partial<Pick<User, 'username' | 'passwordHash' | 'email' | 'emailVerified' | 'name' | 'givenName' | 'familyName'>>;
