import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { dateParameter, execute, placeholders, rowDate } from '../database/prepared-statement.js';
import { Transactions } from '../database/transactions.js';

/** What a request finds when it tries to claim its key. */
export type ClaimOutcome = { outcome: 'claimed' } | { outcome: 'replay'; response: string } | { outcome: 'in_flight' } | { outcome: 'mismatch' };

export interface NewClaim {
  keyHash: string;
  fingerprint: string;
  /** The claiming request's random id. */
  claim: string;
  claimedUntil: Date;
  expiresAt: Date;
}

/**
 * The idempotency_keys table, in plain SQL. Claiming is INSERT first: the primary key decides
 * between two requests with one key, on any instance, and the loser reads what the winner left.
 */
@Injectable()
export class IdempotencyKeyStore {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {}

  /**
   * Claims the key for a request, or says why not. A row past its expiry (not yet purged) is claimed
   * afresh; an in-flight claim past claimed_until (its instance died, or it hangs) is taken over by
   * the same request, never by another one.
   */
  async claim(claim: NewClaim, now: Date): Promise<ClaimOutcome> {
    const date = (value: Date) => dateParameter(value, this.dialect);
    // ON CONFLICT DO NOTHING: a taken key is an expected outcome, not an error (a failed statement would poison a PostgreSQL transaction).
    const insert = 'INSERT INTO "idempotency_keys" ("key_hash", "fingerprint", "claim", "claimed_until", "response", "expires_at") VALUES (?, ?, ?, ?, NULL, ?) ON CONFLICT DO NOTHING';
    if ((await this.write(insert, [claim.keyHash, claim.fingerprint, claim.claim, date(claim.claimedUntil), date(claim.expiresAt)])) === 1) return { outcome: 'claimed' };
    const takeOver =
      'UPDATE "idempotency_keys" SET "fingerprint" = ?, "claim" = ?, "claimed_until" = ?, "response" = NULL, "expires_at" = ? WHERE "key_hash" = ? AND ("expires_at" <= ? OR ("response" IS NULL AND "claimed_until" <= ? AND "fingerprint" = ?))';
    const takeOverParameters = [claim.fingerprint, claim.claim, date(claim.claimedUntil), date(claim.expiresAt), claim.keyHash, date(now), date(now), claim.fingerprint];
    if ((await this.write(takeOver, takeOverParameters)) === 1) return { outcome: 'claimed' };
    const rows = (await this.dataSource.query(placeholders('SELECT "fingerprint", "response", "expires_at" AS "expiresAt" FROM "idempotency_keys" WHERE "key_hash" = ?', this.dialect), [claim.keyHash])) as {
      fingerprint: string;
      response: string | null;
      expiresAt: Date | string;
    }[];
    // Gone (purged or released) since the INSERT, or expired: the caller may simply try again.
    if (rows.length === 0 || rowDate(rows[0].expiresAt) <= now) return { outcome: 'in_flight' };
    if (rows[0].fingerprint !== claim.fingerprint) return { outcome: 'mismatch' };
    return rows[0].response === null ? { outcome: 'in_flight' } : { outcome: 'replay', response: rows[0].response };
  }

  /** Keeps the answer, in the write's transaction, if the claim still holds; false when another request has taken the key over. */
  async complete(keyHash: string, claim: string, response: string, manager: EntityManager): Promise<boolean> {
    return (await execute(manager, 'UPDATE "idempotency_keys" SET "claim" = NULL, "response" = ? WHERE "key_hash" = ? AND "claim" = ?', [response, keyHash, claim])) === 1;
  }

  /** Gives the key up after a failed request (nothing was written), so that a retry runs it again; nothing if the claim was taken over. */
  async release(keyHash: string, claim: string): Promise<void> {
    await this.write('DELETE FROM "idempotency_keys" WHERE "key_hash" = ? AND "claim" = ?', [keyHash, claim]);
  }

  /** One bounded DELETE of keys that expired before `cutoff` (PurgeService). */
  purgeExpired(cutoff: Date, limit: number): Promise<number> {
    const lock = this.dialect === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : '';
    const sql = `DELETE FROM "idempotency_keys" WHERE "key_hash" IN (SELECT "key_hash" FROM "idempotency_keys" WHERE "expires_at" < ? LIMIT ?${lock})`;
    return this.write(sql, [dateParameter(cutoff, this.dialect), limit]);
  }

  private write(sql: string, parameters: unknown[]): Promise<number> {
    return this.transactions.write((manager) => execute(manager, sql, parameters));
  }

  private get dialect(): string {
    return this.dataSource.options.type;
  }
}
