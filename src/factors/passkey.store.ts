import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager, Repository } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import { dateParameter, execute } from '../database/prepared-statement.js';
import { Transactions } from '../database/transactions.js';
import { Passkey } from './passkey.entity.js';

/** The passkeys table. */
@Injectable()
export class PasskeyStore {
  private readonly passkeys: Repository<Passkey>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {
    this.passkeys = dataSource.getRepository(Passkey);
  }

  private get dialect(): string {
    return this.dataSource.options.type;
  }

  async insert(row: Omit<Passkey, 'user'>): Promise<void> {
    await this.transactions.write((manager) => manager.insert(Passkey, row as QueryDeepPartialEntity<Passkey>));
  }

  findByCredentialId(credentialId: string): Promise<Passkey | null> {
    return this.passkeys.findOneBy({ credentialId });
  }

  /** A person's passkeys, oldest first. */
  listFor(userId: string): Promise<Passkey[]> {
    return this.passkeys.find({ where: { userId }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  countFor(userId: string): Promise<number> {
    return this.passkeys.countBy({ userId });
  }

  /**
   * Records a sign-in: the new counter, the backup state and the time, only if the counter is still
   * the one the caller checked against (a concurrent use of a cloned key loses). True when recorded.
   */
  async recordUse(id: string, seenCounter: number, use: { counter: number; backedUp: boolean; at: Date }): Promise<boolean> {
    const sql = 'UPDATE "passkeys" SET "counter" = ?, "backed_up" = ?, "last_used_at" = ? WHERE "id" = ? AND "counter" = ?';
    const backedUp = this.dialect === 'postgres' ? use.backedUp : Number(use.backedUp);
    const parameters = [use.counter, backedUp, dateParameter(use.at, this.dialect), id, seenCounter];
    return (await this.transactions.write((manager) => execute(manager, sql, parameters))) === 1;
  }

  /** Deletes every passkey of a person (users:mfa-reset), in the caller's transaction; returns how many. */
  deleteAll(userId: string, manager: EntityManager): Promise<number> {
    return execute(manager, 'DELETE FROM "passkeys" WHERE "user_id" = ?', [userId]);
  }

  /** Deletes the passkey `id` if it is `userId`'s; true when it was. */
  async removeOf(id: string, userId: string): Promise<boolean> {
    const sql = 'DELETE FROM "passkeys" WHERE "id" = ? AND "user_id" = ?';
    return (await this.transactions.write((manager) => execute(manager, sql, [id, userId]))) === 1;
  }
}
