import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import { dateParameter, execute } from '../database/prepared-statement.js';
import { Transactions } from '../database/transactions.js';
import { PasskeyChallenge, type Ceremony } from './passkey-challenge.entity.js';

/** Challenges left unanswered past their expiry are deleted this many at a time, when a new one is issued. */
const PURGE_BATCH = 100;

/** The passkey_challenges table: issued, then consumed once by a conditional DELETE. */
@Injectable()
export class PasskeyChallengeStore {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {}

  private get dialect(): string {
    return this.dataSource.options.type;
  }

  /** Keeps a new challenge, and clears a bounded batch of expired ones (a page left open, a ceremony cancelled). */
  async insert(row: PasskeyChallenge, now: Date): Promise<void> {
    const skipLocked = this.dialect === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : '';
    const purge = `DELETE FROM "passkey_challenges" WHERE "id" IN (SELECT "id" FROM "passkey_challenges" WHERE "expires_at" < ? LIMIT ?${skipLocked})`;
    await this.transactions.write(async (manager) => {
      await manager.insert(PasskeyChallenge, row as QueryDeepPartialEntity<PasskeyChallenge>);
      await execute(manager, purge, [dateParameter(now, this.dialect), PURGE_BATCH]);
    });
  }

  /**
   * The challenge `id`, deleted by this call, when it was issued for `ceremony` and has not expired;
   * null otherwise. Exactly one of concurrent callers (on any instance) gets it: the DELETE's row count decides.
   */
  async consume(id: string, ceremony: Ceremony, now: Date): Promise<PasskeyChallenge | null> {
    const row = await this.dataSource.getRepository(PasskeyChallenge).findOneBy({ id });
    if (!row || row.ceremony !== ceremony) return null;
    const sql = 'DELETE FROM "passkey_challenges" WHERE "id" = ? AND "ceremony" = ? AND "expires_at" > ?';
    const deleted = await this.transactions.write((manager) => execute(manager, sql, [id, ceremony, dateParameter(now, this.dialect)]));
    return deleted === 1 ? row : null;
  }
}
