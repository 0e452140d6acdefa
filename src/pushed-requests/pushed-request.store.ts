import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { EntityRows } from '../database/entity-rows.js';
import { dateParameter, execute, PreparedStatement } from '../database/prepared-statement.js';
import { Transactions } from '../database/transactions.js';
import { PushedAuthorizationRequest } from './pushed-request.entity.js';

/** The pushed_authorization_requests table: the INSERT at /par, the lookup and the conditional UPDATEs at /authorize. */
@Injectable()
export class PushedRequestStore {
  private readonly rows: EntityRows<PushedAuthorizationRequest>;
  private readonly byReference: PreparedStatement<Record<string, unknown>>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {
    this.rows = new EntityRows(dataSource.getMetadata(PushedAuthorizationRequest));
    this.byReference = new PreparedStatement(dataSource, 'latchkey_par_by_reference', `SELECT ${this.rows.selectList} FROM ${this.rows.table} WHERE "reference_hash" = ?`);
  }

  private get dialect(): string {
    return this.dataSource.options.type;
  }

  async insert(row: Omit<PushedAuthorizationRequest, 'client' | 'openedAt' | 'usedAt'>): Promise<void> {
    const sql =
      'INSERT INTO "pushed_authorization_requests" ("id", "reference_hash", "client_id", "parameters", "expires_at", "opened_at", "used_at", "created_at") VALUES (?, ?, ?, ?, ?, NULL, NULL, ?)';
    const parameters = [row.id, row.referenceHash, row.clientId, JSON.stringify(row.parameters), dateParameter(row.expiresAt, this.dialect), dateParameter(row.createdAt, this.dialect)];
    await this.transactions.write((manager) => execute(manager, sql, parameters));
  }

  async findByReferenceHash(referenceHash: string): Promise<PushedAuthorizationRequest | null> {
    const row = await this.byReference.one(referenceHash);
    return row ? this.rows.decode(row) : null;
  }

  /**
   * The first time a browser brings the request to /authorize: its lifetime becomes the sign-in
   * window. True when this call opened it, or it was open already and is still valid.
   */
  async open(id: string, now: Date, until: Date): Promise<boolean> {
    const sql = 'UPDATE "pushed_authorization_requests" SET "opened_at" = ?, "expires_at" = ? WHERE "id" = ? AND "opened_at" IS NULL AND "used_at" IS NULL AND "expires_at" > ?';
    const nowParameter = dateParameter(now, this.dialect);
    return (await this.transactions.write((manager) => execute(manager, sql, [nowParameter, dateParameter(until, this.dialect), id, nowParameter]))) === 1;
  }

  /** Marks it used with one conditional UPDATE, in the caller's transaction: true for exactly one caller, before it expires. */
  async consume(id: string, now: Date, manager: EntityManager): Promise<boolean> {
    const sql = 'UPDATE "pushed_authorization_requests" SET "used_at" = ? WHERE "id" = ? AND "used_at" IS NULL AND "expires_at" > ?';
    const nowParameter = dateParameter(now, this.dialect);
    return (await execute(manager, sql, [nowParameter, id, nowParameter])) === 1;
  }

  /** One bounded DELETE of requests that expired before `cutoff` (used ones expire too); walks the expires_at index. */
  purgeExpired(cutoff: Date, limit: number): Promise<number> {
    const skipLocked = this.dialect === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : '';
    const sql = `DELETE FROM "pushed_authorization_requests" WHERE "id" IN (SELECT "id" FROM "pushed_authorization_requests" WHERE "expires_at" < ? LIMIT ?${skipLocked})`;
    return this.transactions.write((manager) => execute(manager, sql, [dateParameter(cutoff, this.dialect), limit]));
  }
}
