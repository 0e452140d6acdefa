import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { dateParameter, execute } from '../database/prepared-statement.js';
import { Transactions } from '../database/transactions.js';

/**
 * The nonces of MAC-signed requests (draft-ietf-oauth-v2-http-mac-02 §4.1: the server must make
 * sure a nonce/timestamp pair is used once per token). One INSERT whose primary key is
 * (token, nonce, ts): the database refuses a second use whichever instance receives it.
 */
@Injectable()
export class MacNonceStore {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {}

  /** Records the first use of (token, nonce, ts); false when it was used before. */
  use(tokenId: string, nonce: string, ts: string, expiresAt: Date): Promise<boolean> {
    // ON CONFLICT DO NOTHING: a replay is an expected outcome, not an error to catch (and on
    // PostgreSQL a failed statement would poison a surrounding transaction).
    const sql = 'INSERT INTO "mac_nonces" ("token_id", "nonce", "ts", "expires_at") VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING';
    const parameters = [tokenId, nonce, ts, dateParameter(expiresAt, this.dataSource.options.type)];
    return this.transactions.write(async (manager) => (await execute(manager, sql, parameters)) === 1);
  }

  /** One bounded DELETE of nonces whose timestamp left the window before `cutoff`; rows are named by their primary key. */
  purgeExpired(cutoff: Date, limit: number): Promise<number> {
    const skipLocked = this.dataSource.options.type === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : '';
    const sql = `DELETE FROM "mac_nonces" WHERE ("token_id", "nonce", "ts") IN (SELECT "token_id", "nonce", "ts" FROM "mac_nonces" WHERE "expires_at" < ? LIMIT ?${skipLocked})`;
    return this.transactions.write((manager) => execute(manager, sql, [dateParameter(cutoff, this.dataSource.options.type), limit]));
  }
}
