import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { dateParameter, execute } from '../database/prepared-statement.js';
import { Transactions } from '../database/transactions.js';

/** The dpop_proof_uses table: one INSERT per accepted proof, the replay check (RFC 9449 §11.1). */
@Injectable()
export class DpopProofUseStore {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {}

  /** Records the proof's first use; false when it was used before, on any instance. */
  use(proofHash: string, expiresAt: Date): Promise<boolean> {
    // ON CONFLICT DO NOTHING: a replay is an expected outcome, not an error (a failed statement would poison a PostgreSQL transaction).
    const sql = 'INSERT INTO "dpop_proof_uses" ("proof_hash", "expires_at") VALUES (?, ?) ON CONFLICT DO NOTHING';
    const parameters = [proofHash, dateParameter(expiresAt, this.dataSource.options.type)];
    return this.transactions.write(async (manager) => (await execute(manager, sql, parameters)) === 1);
  }

  /** One bounded DELETE of uses whose proofs left the window before `cutoff`. */
  purgeExpired(cutoff: Date, limit: number): Promise<number> {
    const skipLocked = this.dataSource.options.type === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : '';
    const sql = `DELETE FROM "dpop_proof_uses" WHERE "proof_hash" IN (SELECT "proof_hash" FROM "dpop_proof_uses" WHERE "expires_at" < ? LIMIT ?${skipLocked})`;
    return this.transactions.write((manager) => execute(manager, sql, [dateParameter(cutoff, this.dataSource.options.type), limit]));
  }
}
