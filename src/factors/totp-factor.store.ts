import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { dateParameter, execute } from '../database/prepared-statement.js';
import { Transactions } from '../database/transactions.js';
import { TotpFactor } from './totp-factor.entity.js';

/** The totp_factors table. */
@Injectable()
export class TotpFactorStore {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {}

  find(userId: string): Promise<TotpFactor | null> {
    return this.dataSource.manager.findOneBy(TotpFactor, { userId });
  }

  /** Stores a confirmed enrolment; false when the person already has one (two tabs confirming at once). */
  async insert(factor: TotpFactor, manager: EntityManager): Promise<boolean> {
    const sql = 'INSERT INTO "totp_factors" ("user_id", "sealed_secret", "last_used_step", "created_at", "last_used_at") VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING';
    const dialect = this.dataSource.options.type;
    return (await execute(manager, sql, [factor.userId, factor.sealedSecret, factor.lastUsedStep, dateParameter(factor.createdAt, dialect), factor.lastUsedAt && dateParameter(factor.lastUsedAt, dialect)])) === 1;
  }

  /**
   * The replay guard (RFC 6238 §5.2: a code is accepted once): moves last_used_step forward to
   * `step` only if no code of this step or a later one was accepted, in one statement. True for the
   * one request that moved it, on whichever instance; false for every replay.
   */
  async useStep(userId: string, step: number, at: Date): Promise<boolean> {
    const sql = 'UPDATE "totp_factors" SET "last_used_step" = ?, "last_used_at" = ? WHERE "user_id" = ? AND ("last_used_step" IS NULL OR "last_used_step" < ?)';
    const parameters = [step, dateParameter(at, this.dataSource.options.type), userId, step];
    return this.transactions.write(async (manager) => (await execute(manager, sql, parameters)) === 1);
  }

  /** Removes the person's authenticator; whether there was one. */
  async delete(userId: string, manager: EntityManager): Promise<boolean> {
    return (await execute(manager, 'DELETE FROM "totp_factors" WHERE "user_id" = ?', [userId])) > 0;
  }
}
