import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { databaseConfig, type DatabaseConfig } from '../config/database.config.js';
import { CHANGE_CHANNELS } from '../database/change-channels.js';
import { ChangeNotifications } from '../database/change-notifications.js';
import { EntityRows } from '../database/entity-rows.js';
import { EVERY_ROW, type NotifiedCache } from '../database/notified-cache.js';
import { RowCaches } from '../database/row-caches.js';
import type { Gate } from '../database/gate.js';
import { InsertBatch } from '../database/insert-batch.js';
import { dateParameter, execute, namesStatements, placeholders, postgresPool, PreparedStatement, rowDate } from '../database/prepared-statement.js';
import { Transactions } from '../database/transactions.js';
import { Token, TokenKind } from './token.entity.js';

/** The channel the tokens table's trigger notifies with an access token's hash (migration ChangeNotifications1765000000000). */
export const TOKEN_CHANGES_CHANNEL = CHANGE_CHANNELS.tokens;

/** Until when a row read by hash may be kept: an access token until it expires; a refresh token not at all. */
function keptUntil(row: Record<string, unknown>): number | undefined {
  return row.kind === TokenKind.Access ? (row.expiresAt as Date).getTime() : undefined;
}

/** A token row to insert: everything but what the database or the store fills in. */
export type TokenInsert = Omit<Token, 'createdAt' | 'client' | 'user' | 'successor'>;

/**
 * The tokens table: every read and write of tokens, in plain SQL. The lookup by hash runs on every
 * API request, the INSERT on every token issued and the conditional UPDATE on every refresh, where
 * TypeORM's query builder cost more than the statements themselves (bench/RESULTS.md). Writes run
 * in the caller's transaction when given its manager, otherwise through Transactions. Every write
 * that changes a token this instance may keep (a revocation) goes through `revokeWhere`, which drops
 * what this instance keeps the moment it commits (ChangeNotifications.committing).
 */
@Injectable()
export class TokenStore {
  private readonly rows: EntityRows<Token>;
  private readonly byHash: PreparedStatement<Record<string, unknown>>;
  private readonly insertColumns: string;
  /** One row's placeholders, in the order of insertColumns. */
  private readonly rowPlaceholders: string;
  /** The columns' types in the order of insertColumns (PostgreSQL casts the rotation's VALUES to them). */
  private readonly columnTypes: string[];
  /** PostgreSQL: the INSERTs of tokens issued outside a transaction, grouped per turn of the event loop. */
  private readonly batch?: InsertBatch;
  /** PostgreSQL: access tokens kept per instance until they expire or change. */
  private readonly cache: NotifiedCache;
  /** PostgreSQL: whether the gated INSERTs are named statements (not through a transaction pooler: statementName). */
  private readonly namedStatements: boolean;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
    private readonly notifications: ChangeNotifications,
    @Inject(databaseConfig.KEY) config: DatabaseConfig,
    rowCaches: RowCaches,
  ) {
    this.rows = new EntityRows(dataSource.getMetadata(Token));
    this.namedStatements = namesStatements(dataSource);
    this.byHash = new PreparedStatement(dataSource, 'latchkey_token_by_hash', `SELECT ${this.rows.selectList} FROM ${this.rows.table} WHERE "token_hash" = ?`);
    const columns = ['id', 'kind', 'token_hash', 'family_id', 'client_id', 'user_id', 'scope', 'expires_at', 'consumed_at', 'revoked_at', 'created_at', 'token_type', 'mac_key', 'auth_time', 'sid', 'dpop_jkt', 'audience', 'amr', 'parent_id', 'act'];
    this.insertColumns = columns.map((c) => `"${c}"`).join(', ');
    this.rowPlaceholders = `(${columns.map(() => '?').join(', ')})`;
    const metadata = dataSource.getMetadata(Token);
    this.columnTypes = columns.map((name) => String(metadata.findColumnWithDatabaseName(name)!.type));
    if (dataSource.options.type === 'postgres') this.batch = new InsertBatch(dataSource, 'latchkey_tokens_insert', 'tokens', columns);
    this.cache = rowCaches.create('tokens', TOKEN_CHANGES_CHANNEL, config.tokenCacheMb);
  }

  /**
   * One indexed lookup by the token's hash, as a prepared statement; on PostgreSQL an access token
   * is kept per instance until it expires or changes (a revocation, the deletion of its client or
   * person: the tokens table's trigger tells every instance; NotifiedCache says why that is safe).
   * Refresh tokens are always read: they change at every rotation.
   */
  async findByHash(tokenHash: string): Promise<Token | null> {
    const row = await this.cache.row(tokenHash, () => this.byHash.one(tokenHash), keptUntil);
    return row ? this.rows.decode(row) : null;
  }

  /** One INSERT of all rows, in the caller's transaction, or on its own (on SQLite in this turn's group commit). */
  async insert(rows: readonly TokenInsert[], createdAt: Date, manager?: EntityManager): Promise<void> {
    if (manager) return this.insertRows(rows, createdAt, manager);
    if (this.batch) return void (await this.batch.insert(rows.map((row) => this.values(row, createdAt))));
    return this.transactions.write((batch) => this.insertRows(rows, createdAt, batch));
  }

  /**
   * Stores `rows` only if `gate`, a conditional UPDATE, changes one row, atomically: false (nothing
   * written) when it changed none. The gates are the single-use rules of the token endpoint: a code
   * is redeemed once (AuthorizationCodeStore.consumeGate), a refresh token rotates once
   * (rotationGate, RFC 9700 §4.14.2). PostgreSQL: one statement whose UPDATE gates the INSERT (a
   * data-modifying CTE), atomic on its own in autocommit: one round trip instead of BEGIN, UPDATE,
   * INSERT and COMMIT. SQLite: both in one transaction of the group commit. Nothing kept changes:
   * a gate consumes a code or rotates a refresh token, neither ever kept, and a new row was no one's.
   */
  async insertAfter(gate: Gate, rows: readonly TokenInsert[], createdAt: Date): Promise<boolean> {
    if (this.dialect !== 'postgres') {
      return this.transactions.run(async (manager) => {
        if ((await execute(manager, gate.sql, gate.parameters)) !== 1) return false;
        await this.insertRows(rows, createdAt, manager);
        return true;
      });
    }
    const result = await postgresPool(this.dataSource).query({
      name: this.namedStatements ? `latchkey_tokens_after_${gate.name}_${rows.length}` : undefined,
      text: this.gatedInsert(gate, rows.length),
      values: [...gate.parameters, ...rows.flatMap((row) => this.values(row, createdAt))],
    });
    return result.rowCount === rows.length;
  }

  /**
   * The gate of a refresh token's rotation: it is marked consumed unless it already was, or was
   * revoked, and keeps its sealed successor pair (null: none kept) in the same UPDATE, so that
   * whoever sees the token consumed sees the successor too: a concurrent loser's UPDATE waits for
   * the winner's row lock and reads both, committed (RefreshRepeats).
   */
  rotationGate(tokenId: string, now: Date, successor: string | null): Gate {
    return {
      name: 'rotation',
      sql: 'UPDATE "tokens" SET "consumed_at" = ?, "successor" = ? WHERE "id" = ? AND "kind" = ? AND "consumed_at" IS NULL AND "revoked_at" IS NULL',
      parameters: [dateParameter(now, this.dialect), successor, tokenId, TokenKind.Refresh],
    };
  }

  /**
   * Whether the successor refresh token `successorHash` of the rotated token `rotatedId` is still
   * unused: neither rotated nor revoked, and the rotated token not revoked either. One statement,
   * so one snapshot: a successor's rotation marks it consumed and stores its own successors in one
   * atomic write (rotationGate), so this sees either none of it or all of it. RefreshRepeats answers
   * a repeat only on true, which places the answer before any use of the successor (RFC 9700 §4.14.2).
   */
  async successorUnused(rotatedId: string, successorHash: string): Promise<boolean> {
    const sql =
      'SELECT 1 AS "unused" FROM "tokens" "s" JOIN "tokens" "p" ON "p"."family_id" = "s"."family_id" WHERE "p"."id" = ? AND "p"."revoked_at" IS NULL AND "s"."token_hash" = ? AND "s"."kind" = ? AND "s"."consumed_at" IS NULL AND "s"."revoked_at" IS NULL';
    const rows = (await this.dataSource.query(placeholders(sql, this.dialect), [rotatedId, successorHash, TokenKind.Refresh])) as unknown[];
    return rows.length === 1;
  }

  /** PostgreSQL's gated INSERT of `count` rows; the VALUES are cast, since nothing else gives their types. */
  private gatedInsert(gate: Gate, count: number): string {
    const cast = this.columnTypes.map((type) => `?::${type}`).join(', ');
    const values = Array.from({ length: count }, () => `(${cast})`).join(', ');
    return placeholders(
      `WITH "gate" AS (${gate.sql} RETURNING 1) INSERT INTO "tokens" (${this.insertColumns}) SELECT * FROM (VALUES ${values}) AS "issued" WHERE EXISTS (SELECT 1 FROM "gate")`,
      'postgres',
    );
  }

  /** Revokes one token and every token exchanged from it (RFC 8693), in the caller's transaction; nothing if it already was. */
  async revoke(tokenId: string, now: Date, manager: EntityManager): Promise<void> {
    await this.revokeWhere(manager, 'UPDATE "tokens" SET "revoked_at" = ? WHERE "id" = ? AND "revoked_at" IS NULL', [dateParameter(now, this.dialect), tokenId]);
    await this.revokeExchangedFrom('?', [tokenId], now, manager);
  }

  /**
   * Runs one revocation in the caller's transaction and, when it revoked any, has this instance drop
   * every access token it keeps once that commits (ChangeNotifications.committing; the other
   * instances hear the trigger). Every revocation: the rows are kept by their hash, which the
   * statement does not name, and revocations are rare, so the cache fills again from reads.
   */
  private async revokeWhere(manager: EntityManager, sql: string, parameters: unknown[]): Promise<number> {
    const revoked = await execute(manager, sql, parameters);
    if (revoked > 0) this.notifications.committing(manager, CHANGE_CHANNELS.tokens, EVERY_ROW);
    return revoked;
  }

  /**
   * Revokes, in the caller's transaction, every live token exchanged (RFC 8693) from the tokens whose
   * ids `roots` selects (a subquery or one placeholder, with its parameters), at any depth: one
   * recursive walk down the parent_id index. Every UPDATE of an access token notifies the other
   * instances (the tokens table's trigger), so none keeps a revoked descendant in its cache.
   * Returns how many were revoked.
   */
  private revokeExchangedFrom(roots: string, parameters: unknown[], now: Date, manager: EntityManager): Promise<number> {
    const sql = `WITH RECURSIVE "chain"("id") AS (SELECT "id" FROM "tokens" WHERE "parent_id" IN (${roots}) UNION SELECT "t"."id" FROM "tokens" "t" JOIN "chain" "c" ON "t"."parent_id" = "c"."id") UPDATE "tokens" SET "revoked_at" = ? WHERE "id" IN (SELECT "id" FROM "chain") AND "revoked_at" IS NULL`;
    return this.revokeWhere(manager, sql, [...parameters, dateParameter(now, this.dialect)]);
  }

  /** Revokes every live token of a family, in the caller's transaction; returns how many. Tokens exchanged from one of them are of its family (RFC 8693). */
  revokeFamily(familyId: string, now: Date, manager: EntityManager): Promise<number> {
    return this.revokeWhere(manager, 'UPDATE "tokens" SET "revoked_at" = ? WHERE "family_id" = ? AND "revoked_at" IS NULL', [dateParameter(now, this.dialect), familyId]);
  }

  private get dialect(): string {
    return this.dataSource.options.type;
  }

  private async insertRows(rows: readonly TokenInsert[], createdAt: Date, manager: EntityManager): Promise<void> {
    const values = rows.map(() => this.rowPlaceholders).join(', ');
    const parameters = rows.flatMap((row) => this.values(row, createdAt));
    await execute(manager, `INSERT INTO "tokens" (${this.insertColumns}) VALUES ${values}`, parameters);
  }

  /** A row's values in the order of insertColumns. */
  private values(r: TokenInsert, createdAt: Date): unknown[] {
    const date = (value: Date | null) => (value === null ? null : dateParameter(value, this.dialect));
    return [r.id, r.kind, r.tokenHash, r.familyId, r.clientId, r.userId, r.scope, date(r.expiresAt), date(r.consumedAt), date(r.revokedAt), date(createdAt), r.tokenType, r.macKey, date(r.authTime), r.sid, r.dpopJkt, r.audience, r.amr, r.parentId, r.act];
  }

  /**
   * One bounded DELETE of tokens that expired before `cutoff` (PurgeService says why), access and
   * refresh alike. Nothing kept goes with them: a kept token is dropped when it expires. Walks the expires_at index and nothing else: every row it reaches goes, so a run
   * never re-reads rows it must keep.
   */
  purgeExpired(cutoff: Date, limit: number): Promise<number> {
    const lock = this.dialect === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : '';
    const sql = `DELETE FROM "tokens" WHERE "id" IN (SELECT "id" FROM "tokens" WHERE "expires_at" < ? LIMIT ?${lock})`;
    return this.transactions.write((manager) => execute(manager, sql, [dateParameter(cutoff, this.dialect), limit]));
  }

  /** Revokes every live token of a person for a client (consent withdrawn), and every token exchanged from them, in the caller's transaction; returns how many. */
  async revokeAllOf(userId: string, clientId: string, now: Date, manager: EntityManager): Promise<number> {
    const sql = 'UPDATE "tokens" SET "revoked_at" = ? WHERE "user_id" = ? AND "client_id" = ? AND "revoked_at" IS NULL';
    const revoked = await this.revokeWhere(manager, sql, [dateParameter(now, this.dialect), userId, clientId]);
    const roots = 'SELECT "id" FROM "tokens" WHERE "user_id" = ? AND "client_id" = ?';
    return revoked + (await this.revokeExchangedFrom(roots, [userId, clientId], now, manager));
  }

  /**
   * Revokes every live token of a person, for every client, offline_access grants and tokens
   * exchanged from theirs included (deprovisioning, issue 46), in the caller's transaction; returns how many.
   */
  async revokeEveryTokenOf(userId: string, now: Date, manager: EntityManager): Promise<number> {
    const revoked = await this.revokeWhere(manager, 'UPDATE "tokens" SET "revoked_at" = ? WHERE "user_id" = ? AND "revoked_at" IS NULL', [dateParameter(now, this.dialect), userId]);
    return revoked + (await this.revokeExchangedFrom('SELECT "id" FROM "tokens" WHERE "user_id" = ?', [userId], now, manager));
  }

  revokeSessionGrants(userId: string, sid: string, now: Date, manager: EntityManager): Promise<number> {
    const families = `SELECT "family_id" FROM "tokens" WHERE "user_id" = ? AND "sid" = ? GROUP BY "family_id" HAVING SUM(CASE WHEN (' ' || "scope" || ' ') LIKE '% offline_access %' THEN 1 ELSE 0 END) = 0`;
    const sql = `UPDATE "tokens" SET "revoked_at" = ? WHERE "family_id" IN (${families}) AND "revoked_at" IS NULL`;
    return this.revokeWhere(manager, sql, [dateParameter(now, this.dialect), userId, sid]);
  }

  /** When a token was last issued to each client for this person: one grouped read over the (user_id, client_id) index. */
  async lastIssuedByClient(userId: string): Promise<Map<string, Date>> {
    const rows = (await this.dataSource.query(placeholders('SELECT "client_id" AS "clientId", MAX("created_at") AS "lastIssuedAt" FROM "tokens" WHERE "user_id" = ? GROUP BY "client_id"', this.dialect), [userId])) as {
      clientId: string;
      lastIssuedAt: Date | string;
    }[];
    return new Map(rows.map((row) => [row.clientId, rowDate(row.lastIssuedAt)]));
  }
}
