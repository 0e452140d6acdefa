import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { dateParameter, execute } from '../database/prepared-statement.js';
import { Transactions } from '../database/transactions.js';
import { RecoveryCode } from './recovery-code.entity.js';

/** The recovery_codes table. */
@Injectable()
export class RecoveryCodeStore {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {}

  /** The person's codes (hashes and dates only), for counting what is left. */
  list(userId: string): Promise<RecoveryCode[]> {
    return this.dataSource.manager.find(RecoveryCode, { where: { userId }, order: { createdAt: 'ASC' } });
  }

  /** Replaces every code of the person with `hashes` (the old ones die), in the caller's transaction. */
  async replace(userId: string, hashes: string[], at: Date, manager: EntityManager): Promise<void> {
    await this.deleteAll(userId, manager);
    const dialect = this.dataSource.options.type;
    for (const hash of hashes) {
      await execute(manager, 'INSERT INTO "recovery_codes" ("code_hash", "user_id", "created_at", "used_at") VALUES (?, ?, ?, NULL)', [hash, userId, dateParameter(at, dialect)]);
    }
  }

  /** Uses a code: one conditional UPDATE, so that of two requests presenting it, on any instances, one wins. */
  async use(userId: string, hash: string, at: Date): Promise<boolean> {
    const sql = 'UPDATE "recovery_codes" SET "used_at" = ? WHERE "code_hash" = ? AND "user_id" = ? AND "used_at" IS NULL';
    const parameters = [dateParameter(at, this.dataSource.options.type), hash, userId];
    return this.transactions.write(async (manager) => (await execute(manager, sql, parameters)) === 1);
  }

  async deleteAll(userId: string, manager: EntityManager): Promise<number> {
    return execute(manager, 'DELETE FROM "recovery_codes" WHERE "user_id" = ?', [userId]);
  }
}
