import Database from 'better-sqlite3';

/** TypeORM's record of applied migrations: its rows are the target's own business, not copied. */
export const MIGRATIONS_TABLE = 'migrations';

/**
 * A consistent view of a SQLite deployment's database, running or stopped, read in one read
 * transaction. In WAL mode (every Latchkey deployment: data-source.options.ts) a reader sees the
 * database as of its first read for as long as its transaction lasts, while the server keeps
 * committing to the WAL: no lock is taken from the server and nothing is written. (A copy of the
 * file first, with VACUUM INTO or the backup API, would give the same snapshot at the cost of
 * another copy of the whole database on disk.) The price: the server's checkpoints cannot recycle
 * the WAL past our snapshot until we finish, so the WAL grows meanwhile.
 */
export class SqliteSnapshot {
  private readonly db: Database.Database;
  /** When the snapshot was taken (its first read). */
  readonly takenAt: Date;

  constructor(path: string) {
    // fileMustExist: a mistyped path must not create an empty database and copy nothing.
    this.db = new Database(path, { fileMustExist: true, timeout: 5000 });
    this.db.pragma('query_only = 1');
    this.db.exec('BEGIN');
    // The first read fixes the snapshot every later read of this transaction sees.
    this.db.prepare('SELECT count(*) FROM sqlite_master').get();
    this.takenAt = new Date();
  }

  /** The names of the migrations applied to this database, or [] before the first. */
  appliedMigrations(): string[] {
    const exists = this.db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(MIGRATIONS_TABLE);
    if (!exists) return [];
    return (this.db.prepare(`SELECT "name" FROM "${MIGRATIONS_TABLE}" ORDER BY "id"`).all() as { name: string }[]).map((row) => row.name);
  }

  /** Every table of the deployment's schema (not SQLite's own, nor the migrations record). */
  tables(): string[] {
    const rows = this.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> ? ORDER BY name`).all(MIGRATIONS_TABLE) as { name: string }[];
    return rows.map((row) => row.name);
  }

  columns(table: string): string[] {
    return (this.db.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as { name: string }[]).map((row) => row.name);
  }

  /**
   * The table's rows, `batchSize` at a time, as arrays in the order of `columns`. Integers come as
   * BigInt where they would not fit a double (safeIntegers), so none is rounded on the way.
   */
  *batches(table: string, columns: readonly string[], batchSize: number): Generator<unknown[][]> {
    const statement = this.db.prepare(`SELECT ${columns.map((c) => `"${c}"`).join(', ')} FROM "${table}"`).raw(true).safeIntegers(true);
    let batch: unknown[][] = [];
    for (const row of statement.iterate() as IterableIterator<unknown[]>) {
      batch.push(row);
      if (batch.length === batchSize) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  }

  close(): void {
    if (this.db.inTransaction) this.db.exec('ROLLBACK');
    this.db.close();
  }
}
