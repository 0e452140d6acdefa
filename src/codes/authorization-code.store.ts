import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { EntityRows } from '../database/entity-rows.js';
import type { Gate } from '../database/gate.js';
import { InsertBatch } from '../database/insert-batch.js';
import { dateParameter, execute } from '../database/prepared-statement.js';
import { LookupBatch } from '../database/lookup-batch.js';
import { Transactions } from '../database/transactions.js';
import { AuthorizationCode } from './authorization-code.entity.js';

/** The columns of a code's INSERT, in the order of its parameters. */
const INSERT_COLUMNS = ['id', 'code_hash', 'client_id', 'user_id', 'redirect_uri', 'redirect_uri_in_request', 'scope', 'code_challenge', 'nonce', 'auth_time', 'sid', 'resources', 'dpop_jkt', 'expires_at', 'consumed_at', 'created_at', 'amr'];

/** A code row to insert. */
export type CodeInsert = Omit<AuthorizationCode, 'consumedAt' | 'client' | 'user'>;

/**
 * The authorization_codes table, in plain SQL like the tokens (token.store.ts): the INSERT at
 * every approval, the lookup by hash and the conditional UPDATE at every redemption.
 */
@Injectable()
export class AuthorizationCodeStore {
  private readonly rows: EntityRows<AuthorizationCode>;
  private readonly byHash: LookupBatch;
  /** PostgreSQL: the codes issued outside a transaction in one turn of the event loop, in one INSERT. */
  private readonly batch?: InsertBatch;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {
    this.rows = new EntityRows(dataSource.getMetadata(AuthorizationCode));
    this.byHash = new LookupBatch(dataSource, 'latchkey_code_by_hash', `SELECT ${this.rows.selectList} FROM ${this.rows.table}`, 'code_hash', 'codeHash');
    if (dataSource.options.type === 'postgres') this.batch = new InsertBatch(dataSource, 'latchkey_codes_insert', 'authorization_codes', INSERT_COLUMNS);
  }

  /** Stores a new code in the caller's transaction, or on its own (PostgreSQL: in this turn's InsertBatch; SQLite: its group commit). */
  async insert(code: CodeInsert, manager?: EntityManager): Promise<void> {
    const dialect = this.dataSource.options.type;
    const sql = `INSERT INTO "authorization_codes" (${INSERT_COLUMNS.map((column) => `"${column}"`).join(', ')}) VALUES (${INSERT_COLUMNS.map(() => '?').join(', ')})`;
    const parameters = [
      code.id,
      code.codeHash,
      code.clientId,
      code.userId,
      code.redirectUri,
      // SQLite keeps booleans as 0/1 (as TypeORM writes them).
      dialect === 'postgres' ? code.redirectUriInRequest : Number(code.redirectUriInRequest),
      code.scope,
      code.codeChallenge,
      code.nonce,
      code.authTime === null ? null : dateParameter(code.authTime, dialect),
      code.sid,
      code.resources,
      code.dpopJkt,
      dateParameter(code.expiresAt, dialect),
      null,
      dateParameter(code.createdAt, dialect),
      code.amr,
    ];
    if (manager) await execute(manager, sql, parameters);
    else if (this.batch) await this.batch.insert([parameters]);
    else await this.transactions.write((within) => execute(within, sql, parameters));
  }

  /** One indexed lookup by the code's hash, as a prepared statement (the token endpoint's hot path). */
  async findByHash(codeHash: string): Promise<AuthorizationCode | null> {
    const row = await this.byHash.one(codeHash);
    return row ? this.rows.decode(row) : null;
  }

  /** Marks the code used with one conditional UPDATE, in the caller's transaction: true for exactly one caller. */
  async consume(codeId: string, now: Date, manager: EntityManager): Promise<boolean> {
    const { sql, parameters } = this.consumeGate(codeId, now);
    return (await execute(manager, sql, parameters)) === 1;
  }

  /** The conditional UPDATE that burns a code once (RFC 6749 §4.1.2), as the gate of the tokens it yields (TokenStore.insertAfter). */
  consumeGate(codeId: string, now: Date): Gate {
    return { name: 'code', sql: 'UPDATE "authorization_codes" SET "consumed_at" = ? WHERE "id" = ? AND "consumed_at" IS NULL', parameters: [dateParameter(now, this.dataSource.options.type), codeId] };
  }

  /** One bounded DELETE of codes that expired before `cutoff` (PurgeService says why they may go); walks the expires_at index. */
  purgeExpired(cutoff: Date, limit: number): Promise<number> {
    const skipLocked = this.dataSource.options.type === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : '';
    const sql = `DELETE FROM "authorization_codes" WHERE "id" IN (SELECT "id" FROM "authorization_codes" WHERE "expires_at" < ? LIMIT ?${skipLocked})`;
    return this.transactions.write((manager) => execute(manager, sql, [dateParameter(cutoff, this.dataSource.options.type), limit]));
  }

  /** Marks every unused code of a person used, for every client (deprovisioning, issue 46), in the caller's transaction. */
  async consumeEveryCodeOf(userId: string, now: Date, manager: EntityManager): Promise<void> {
    const sql = 'UPDATE "authorization_codes" SET "consumed_at" = ? WHERE "user_id" = ? AND "consumed_at" IS NULL';
    await execute(manager, sql, [dateParameter(now, this.dataSource.options.type), userId]);
  }

  /** Marks every unused code of a person for a client used (consent withdrawn), in the caller's transaction. */
  async consumeAllOf(userId: string, clientId: string, now: Date, manager: EntityManager): Promise<void> {
    const sql = 'UPDATE "authorization_codes" SET "consumed_at" = ? WHERE "user_id" = ? AND "client_id" = ? AND "consumed_at" IS NULL';
    await execute(manager, sql, [dateParameter(now, this.dataSource.options.type), userId, clientId]);
  }
}
