import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { dateParameter, execute } from '../database/prepared-statement.js';
import { InsertBatch } from '../database/insert-batch.js';
import { Transactions } from '../database/transactions.js';

/** The kinds of single-use JWT, kept apart so that one kind's jti never collides with another's. */
export type JtiKind = 'dpop_proof' | 'client_assertion' | 'saml_assertion' | 'upstream_logout_token';

/**
 * The jti_uses table: one INSERT per accepted single-use JWT, the replay check that holds across
 * instances (RFC 9449 §11.1 for DPoP proofs, RFC 7523 §3 item 7 for client assertions).
 */
@Injectable()
export class JtiUseStore {
  /** PostgreSQL: the INSERTs of one turn of the event loop in one statement (InsertBatch); SQLite: the group commit. */
  private readonly batch?: InsertBatch;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {
    if (dataSource.options.type === 'postgres') this.batch = new InsertBatch(dataSource, 'latchkey_jti_use', 'jti_uses', ['use_hash', 'expires_at'], 'use_hash');
  }

  /**
   * Records the first use of `jti` by `signer` (a DPoP key's thumbprint, a client id) until
   * `expiresAt`; false when it was used before, on any instance.
   */
  async use(kind: JtiKind, signer: string, jti: string, expiresAt: Date): Promise<boolean> {
    const useHash = createHash('sha256').update(`${kind}\n${signer}\n${jti}`).digest('hex');
    if (this.batch) return (await this.batch.insert([[useHash, expiresAt]]))[0];
    // ON CONFLICT DO NOTHING: a replay is an expected outcome, not an error (a failed statement would poison a PostgreSQL transaction).
    const sql = 'INSERT INTO "jti_uses" ("use_hash", "expires_at") VALUES (?, ?) ON CONFLICT DO NOTHING';
    const parameters = [useHash, dateParameter(expiresAt, this.dataSource.options.type)];
    return this.transactions.write(async (manager) => (await execute(manager, sql, parameters)) === 1);
  }

  /** One bounded DELETE of uses whose JWTs could no longer be accepted before `cutoff`. */
  purgeExpired(cutoff: Date, limit: number): Promise<number> {
    const skipLocked = this.dataSource.options.type === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : '';
    const sql = `DELETE FROM "jti_uses" WHERE "use_hash" IN (SELECT "use_hash" FROM "jti_uses" WHERE "expires_at" < ? LIMIT ?${skipLocked})`;
    return this.transactions.write((manager) => execute(manager, sql, [dateParameter(cutoff, this.dataSource.options.type), limit]));
  }
}
