import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { placeholders, toSqliteDate } from '../database/prepared-statement.js';

/**
 * The nonces of MAC-signed requests (draft-ietf-oauth-v2-http-mac-02 §4.1: the server must make
 * sure a nonce/timestamp pair is used once per token). One INSERT whose primary key is
 * (token, nonce, ts): the database refuses a second use whichever instance receives it.
 */
@Injectable()
export class MacNoncesService {
  private readonly sql: string;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    // ON CONFLICT DO NOTHING: a replay is an expected outcome, not an error to catch (and on
    // PostgreSQL a failed statement would poison a surrounding transaction).
    this.sql = placeholders('INSERT INTO "mac_nonces" ("token_id", "nonce", "ts", "expires_at") VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING', dataSource.options.type);
  }

  /** Records the first use of (token, nonce, ts); false when it was used before. */
  async use(tokenId: string, nonce: string, ts: string, expiresAt: Date): Promise<boolean> {
    const sqlite = this.dataSource.options.type !== 'postgres';
    const runner = this.dataSource.createQueryRunner();
    try {
      const result = await runner.query(this.sql, [tokenId, nonce, ts, sqlite ? toSqliteDate(expiresAt) : expiresAt], true);
      return result.affected === 1;
    } finally {
      await runner.release();
    }
  }
}
