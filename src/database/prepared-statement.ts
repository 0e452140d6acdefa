import type { DataSource, EntityManager } from 'typeorm';
import { AbstractSqliteDriver } from 'typeorm/driver/sqlite-abstract/AbstractSqliteDriver.js';
import { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';

/**
 * A timestamp column as a Date: PostgreSQL's driver returns Dates already; SQLite returns the
 * DATETIME text TypeORM wrote (UTC, "YYYY-MM-DD HH:MM:SS.SSS").
 */
export function rowDate(value: Date | string): Date;
export function rowDate(value: Date | string | null): Date | null;
export function rowDate(value: Date | string | null): Date | null {
  return typeof value === 'string' ? new Date(`${value.replace(' ', 'T')}Z`) : value;
}

/** A Date as TypeORM writes it into a SQLite DATETIME column. */
export function toSqliteDate(date: Date): string {
  return date.toISOString().replace('T', ' ').replace('Z', '');
}

/** `?` placeholders as the dialect wants them: PostgreSQL numbers them ($1, $2 …). */
export function placeholders(sql: string, dialect: string): string {
  let n = 0;
  return dialect === 'postgres' ? sql.replace(/\?/g, () => `$${++n}`) : sql;
}

/** A Date parameter as the dialect stores it (SQLite: TypeORM's DATETIME text; PostgreSQL: the Date). */
export function dateParameter(date: Date, dialect: string): Date | string {
  return dialect === 'postgres' ? date : toSqliteDate(date);
}

/**
 * Runs one write statement (`?` placeholders) in the manager's transaction, or on its own, and
 * returns how many rows it changed: the conditional UPDATEs of the token endpoint, without the
 * query builder. The driver's own statement cache keeps it prepared (better-sqlite3); PostgreSQL
 * plans it per call.
 */
export async function execute(manager: EntityManager, sql: string, parameters: unknown[]): Promise<number> {
  const dialect = manager.connection.options.type;
  const runner = manager.queryRunner ?? manager.connection.createQueryRunner();
  try {
    const result = (await runner.query(placeholders(sql, dialect), parameters, true)) as { affected?: number };
    return result.affected ?? 0;
  } finally {
    if (!manager.queryRunner) await runner.release();
  }
}

/**
 * Runs one statement that returns rows (an INSERT … RETURNING) in the manager's transaction, or on
 * its own, as `execute` does; returns its rows.
 */
export async function executeReturning<Row>(manager: EntityManager, sql: string, parameters: unknown[]): Promise<Row[]> {
  const dialect = manager.connection.options.type;
  const runner = manager.queryRunner ?? manager.connection.createQueryRunner();
  try {
    const result = (await runner.query(placeholders(sql, dialect), parameters, true)) as { records?: Row[] };
    return result.records ?? [];
  } finally {
    if (!manager.queryRunner) await runner.release();
  }
}

interface SqliteStatement {
  get(...parameters: unknown[]): unknown;
}
interface SqliteConnection {
  prepare(sql: string): SqliteStatement;
}
/**
 * What the hot path uses of node-postgres's pool: statements with parameters, named (prepared once
 * per pooled connection) or unnamed (parsed at each execution; `name` undefined).
 */
export interface PgPool {
  query(config: { name?: string; text: string; values: unknown[] }): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
}

/**
 * The pool option (DataSourceOptions.extra, which node-postgres's pool keeps and ignores) that
 * data-source.options.ts sets when DATABASE_POOL_MODE=transaction.
 */
export const UNNAMED_STATEMENTS = 'latchkeyUnnamedStatements';

/**
 * The name to prepare a statement under on this data source, or undefined for an unnamed one.
 * A named statement belongs to one server connection; a transaction pooler (PgBouncer's
 * pool_mode = transaction) hands each transaction any server connection, so a name prepared
 * through one client connection is missing on the next server ("prepared statement … does not
 * exist") or already there from another client ("… already exists"). Unnamed statements are
 * parsed and planned at each execution, in the same round trip (the extended protocol's unnamed
 * statement: Parse, Bind, Execute, Sync), which any pooler passes on; bench/RESULTS.md has the cost.
 */
export function statementName(dataSource: DataSource, name: string): string | undefined {
  return namesStatements(dataSource) ? name : undefined;
}

/** Whether statements are prepared by name on this data source (statementName); read once, where a statement's name varies per call. */
export function namesStatements(dataSource: DataSource): boolean {
  return (dataSource.options as { extra?: Record<string, unknown> }).extra?.[UNNAMED_STATEMENTS] !== true;
}

/** node-postgres's pool behind a PostgreSQL data source, for statements run without TypeORM's query runner. */
export function postgresPool(dataSource: DataSource): PgPool {
  const driver = dataSource.driver;
  const pool = driver instanceof PostgresDriver ? (driver.master as PgPool | undefined) : undefined;
  if (!pool) throw new Error('Driver not Connected');
  return pool;
}

/**
 * A single-row SELECT prepared once and run without the query builder, for the lookups on every
 * request's path (a token check): TypeORM builds, escapes and hydrates each query anew, which cost
 * more than the indexed lookup itself (bench/RESULTS.md). SQLite: a better-sqlite3 statement,
 * re-prepared if the connection was replaced. PostgreSQL: a named statement, which node-postgres
 * prepares once per pooled connection (unnamed through a transaction pooler: statementName). The SQL uses `?` placeholders, rewritten to `$n` for PostgreSQL.
 * Errors are the driver's own, so a lost database is still recognised (database-unavailable.ts).
 */
export class PreparedStatement<Row> {
  private connection?: SqliteConnection;
  private statement?: SqliteStatement;
  private readonly postgresSql: string;
  /** PostgreSQL: the statement's name, or undefined through a transaction pooler (statementName). */
  private readonly name?: string;

  constructor(
    private readonly dataSource: DataSource,
    name: string,
    private readonly sql: string,
  ) {
    this.postgresSql = placeholders(sql, 'postgres');
    this.name = statementName(dataSource, name);
  }

  async one(...parameters: unknown[]): Promise<Row | undefined> {
    // The drivers' public connection handles: node-postgres's pool, better-sqlite3's database.
    const driver = this.dataSource.driver;
    if (driver instanceof PostgresDriver) {
      const result = await postgresPool(this.dataSource).query({ name: this.name, text: this.postgresSql, values: parameters });
      return result.rows[0] as Row | undefined;
    }
    const connection = driver instanceof AbstractSqliteDriver ? (driver.databaseConnection as SqliteConnection | undefined) : undefined;
    if (!connection) throw new Error('Driver not Connected');
    if (connection !== this.connection) {
      this.statement = connection.prepare(this.sql);
      this.connection = connection;
    }
    return this.statement!.get(...parameters) as Row | undefined;
  }
}
