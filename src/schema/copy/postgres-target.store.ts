import { DataSource, MigrationExecutor, type QueryRunner } from 'typeorm';
import { MIGRATIONS } from '../migrations/index.js';
import { columnKindOf, TableChecksum, targetParameter, type ColumnKind } from './column-values.js';
import { MIGRATIONS_TABLE } from './sqlite-snapshot.store.js';

/**
 * A target column: its name, its type as PostgreSQL spells it without length (the INSERT's casts:
 * an explicit cast to varchar(64) would cut a longer value silently, where the column's own check
 * refuses it) and its kind.
 */
export interface TargetColumn {
  name: string;
  type: string;
  kind: ColumnKind;
}

/** Any number: two `db:copy` runs into one database wait for each other, and the second then finds it not empty. */
const COPY_LOCK = 0x6c6b6370;
/** Rows read back per FETCH when verifying. */
const FETCH_SIZE = 5000;

/** Why a copy cannot start or did not verify: printed as is, with nothing written to the target. */
export class CopyRefused extends Error {}

const quoted = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * The PostgreSQL database a copy goes into, held in ONE transaction from the first check to the
 * last verification: the migrations, every row and the sequences commit together or not at all
 * (PostgreSQL's DDL is transactional), so a failure at any point leaves the database as it was.
 */
export class PostgresTarget {
  private constructor(
    private readonly dataSource: DataSource,
    private readonly runner: QueryRunner,
  ) {}

  /** Connects and begins the transaction. No entities: the dialect of entity classes is this process's (SQLite's); the migrations need none. */
  static async open(url: string): Promise<PostgresTarget> {
    const dataSource = new DataSource({ type: 'postgres', url, entities: [], migrations: MIGRATIONS, migrationsTransactionMode: 'none', extra: { connectionTimeoutMillis: 5000 } });
    try {
      await dataSource.initialize();
    } catch (error) {
      throw new CopyRefused(`cannot connect to the target database: ${(error as Error).message}`);
    }
    const runner = dataSource.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    await runner.query('SELECT pg_advisory_xact_lock($1)', [COPY_LOCK]);
    return new PostgresTarget(dataSource, runner);
  }

  /**
   * Refuses a database that holds any row, TypeORM's migration record aside: the copy is the
   * deployment's whole state, and merging it into another would mix two deployments' users,
   * clients and keys. Tables without rows (a database prepared with migrations:run) are fine.
   */
  async assertEmpty(): Promise<void> {
    const tables = (await this.runner.query(`SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`)) as { tablename: string }[];
    const filled: string[] = [];
    for (const { tablename } of tables) {
      if (tablename === MIGRATIONS_TABLE) continue;
      const [{ found }] = (await this.runner.query(`SELECT EXISTS (SELECT 1 FROM ${quoted(tablename)}) AS found`)) as { found: boolean }[];
      if (found) filled.push(tablename);
    }
    if (filled.length > 0) throw new CopyRefused(`the target database is not empty (rows in ${filled.join(', ')}); give db:copy a new, empty database`);
    if (tables.some((t) => t.tablename === MIGRATIONS_TABLE)) {
      const known = new Set(MIGRATIONS.map((m) => new m().name));
      const applied = (await this.runner.query(`SELECT "name" FROM ${quoted(MIGRATIONS_TABLE)}`)) as { name: string }[];
      const unknown = applied.map((row) => row.name).filter((name) => !known.has(name));
      if (unknown.length > 0) throw new CopyRefused(`the target database has migrations this version does not know (${unknown.join(', ')}): it belongs to a newer Latchkey`);
    }
  }

  /** Applies our pending migrations in the copy's transaction; returns their names. */
  async migrate(): Promise<string[]> {
    const executor = new MigrationExecutor(this.dataSource, this.runner);
    executor.transaction = 'none';
    return (await executor.executePendingMigrations()).map((m) => m.name);
  }

  /** The tables the migrations created (not the migration record), parents before children (foreign keys). */
  async tablesInCopyOrder(): Promise<string[]> {
    const tables = ((await this.runner.query(`SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename <> $1 ORDER BY tablename`, [MIGRATIONS_TABLE])) as { tablename: string }[]).map((t) => t.tablename);
    const references = (await this.runner.query(
      `SELECT c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE c.contype = 'f' AND n.nspname = current_schema()`,
    )) as { child: string; parent: string }[];
    const parents = new Map(tables.map((t) => [t, new Set<string>()]));
    for (const { child, parent } of references) if (child !== parent) parents.get(child.replace(/"/g, ''))?.add(parent.replace(/"/g, ''));
    const ordered: string[] = [];
    const visit = (table: string, path: Set<string>): void => {
      if (ordered.includes(table)) return;
      if (path.has(table)) throw new Error(`foreign keys form a cycle through ${table}`);
      path.add(table);
      for (const parent of parents.get(table) ?? []) visit(parent, path);
      path.delete(table);
      ordered.push(table);
    };
    for (const table of tables) visit(table, new Set());
    return ordered;
  }

  async columns(table: string): Promise<TargetColumn[]> {
    const rows = (await this.runner.query(
      `SELECT a.attname AS name, format_type(a.atttypid, NULL) AS type, t.typname AS udt FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
      [quoted(table)],
    )) as { name: string; type: string; udt: string }[];
    return rows.map((row) => {
      const kind = columnKindOf(row.udt);
      if (!kind) throw new CopyRefused(`${table}.${row.name} has the type ${row.type}, which db:copy does not know how to copy`);
      return { name: row.name, type: row.type, kind };
    });
  }

  /** Inserts rows (arrays in the order of `columns`) with one statement: one array parameter per column, unnested. */
  async insert(table: string, columns: readonly TargetColumn[], rows: readonly unknown[][]): Promise<void> {
    const parameters = columns.map((column, index) => rows.map((row) => targetParameter(column.kind, row[index])));
    const unnest = columns.map((column, index) => `$${index + 1}::${column.type}[]`).join(', ');
    await this.runner.query(`INSERT INTO ${quoted(table)} (${columns.map((c) => quoted(c.name)).join(', ')}) SELECT * FROM unnest(${unnest})`, parameters);
  }

  /** The count and checksum of what the table now holds, read back through a cursor in this transaction. */
  async checksum(table: string, columns: readonly TargetColumn[]): Promise<TableChecksum> {
    const checksum = new TableChecksum(columns.map((c) => c.kind));
    await this.runner.query(`DECLARE latchkey_copy_check NO SCROLL CURSOR FOR SELECT ${columns.map((c) => quoted(c.name)).join(', ')} FROM ${quoted(table)}`);
    for (;;) {
      const rows = (await this.runner.query(`FETCH FORWARD ${FETCH_SIZE} FROM latchkey_copy_check`)) as Record<string, unknown>[];
      for (const row of rows) checksum.add(columns.map((c) => row[c.name]));
      if (rows.length < FETCH_SIZE) break;
    }
    await this.runner.query('CLOSE latchkey_copy_check');
    return checksum;
  }

  /** Moves each serial or identity column's sequence past the copied values, so the next row does not collide. */
  async fixSequences(table: string, columns: readonly TargetColumn[]): Promise<string[]> {
    const fixed: string[] = [];
    for (const column of columns) {
      const [{ sequence }] = (await this.runner.query(`SELECT pg_get_serial_sequence($1, $2) AS sequence`, [quoted(table), column.name])) as { sequence: string | null }[];
      if (!sequence) continue;
      await this.runner.query(`SELECT setval($1, COALESCE((SELECT max(${quoted(column.name)}) FROM ${quoted(table)}), 0) + 1, false)`, [sequence]);
      fixed.push(sequence);
    }
    return fixed;
  }

  async commit(): Promise<void> {
    await this.runner.commitTransaction();
  }

  /** Rolls back whatever this copy did (if still open) and disconnects. */
  async close(): Promise<void> {
    try {
      if (this.runner.isTransactionActive) await this.runner.rollbackTransaction();
    } finally {
      await this.runner.release();
      await this.dataSource.destroy();
    }
  }
}
