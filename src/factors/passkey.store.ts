import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { validate as isUuid } from 'uuid';
import { IsNull, type DataSource, type EntityManager, type Repository } from 'typeorm';
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

  async insert(row: Omit<Passkey, 'user' | 'clonedAt'>): Promise<void> {
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

  /** How many of a person's passkeys still sign in: those with no copy detected. */
  countUsableFor(userId: string): Promise<number> {
    return this.passkeys.countBy({ userId, clonedAt: IsNull() });
  }

  /**
   * Records a sign-in: the new counter, the backup state and the time, only if the counter is still
   * the one the caller checked against (a concurrent use of a cloned key loses) and no copy has been
   * detected meanwhile (markCloned). True when recorded.
   */
  async recordUse(id: string, seenCounter: number, use: { counter: number; backedUp: boolean; at: Date }): Promise<boolean> {
    const sql = 'UPDATE "passkeys" SET "counter" = ?, "backed_up" = ?, "last_used_at" = ? WHERE "id" = ? AND "counter" = ? AND "cloned_at" IS NULL';
    const backedUp = this.dialect === 'postgres' ? use.backedUp : Number(use.backedUp);
    const parameters = [use.counter, backedUp, dateParameter(use.at, this.dialect), id, seenCounter];
    return (await this.transactions.write((manager) => execute(manager, sql, parameters))) === 1;
  }

  /**
   * Blocks the passkey: a copy was detected at `at`. Only the first detection writes, in the
   * caller's transaction; true when this one did (it then ends the sessions and is audited).
   */
  async markCloned(id: string, at: Date, manager: EntityManager): Promise<boolean> {
    const sql = 'UPDATE "passkeys" SET "cloned_at" = ? WHERE "id" = ? AND "cloned_at" IS NULL';
    return (await execute(manager, sql, [dateParameter(at, this.dialect), id])) === 1;
  }

  /** When the passkey was blocked, read in the caller's transaction; null when it is not (or no longer exists). */
  async clonedAt(id: string, manager: EntityManager): Promise<Date | null> {
    return (await manager.findOneBy(Passkey, { id }))?.clonedAt ?? null;
  }

  /** Deletes every passkey of a person (users:mfa-reset), in the caller's transaction; returns how many. */
  deleteAll(userId: string, manager: EntityManager): Promise<number> {
    return execute(manager, 'DELETE FROM "passkeys" WHERE "user_id" = ?', [userId]);
  }

  /** Deletes the passkey `id` if it is `userId`'s, in the caller's transaction if given; true when it was. */
  async removeOf(id: string, userId: string, manager?: EntityManager): Promise<boolean> {
    // Passkey ids are UUIDs: anything else names none (PostgreSQL's uuid column would answer it with an error, not a miss).
    if (!isUuid(id)) return false;
    const sql = 'DELETE FROM "passkeys" WHERE "id" = ? AND "user_id" = ?';
    const work = (within: EntityManager) => execute(within, sql, [id, userId]);
    return (await (manager ? work(manager) : this.transactions.write(work))) === 1;
  }
}
