import { MIGRATIONS } from '../migrations/index.js';
import { TableChecksum } from './column-values.js';
import { CopyRefused, PostgresTarget } from './postgres-target.store.js';
import { SqliteSnapshot } from './sqlite-snapshot.store.js';

/** Rows per INSERT: one array parameter per column, so the statement's size does not grow with it. */
const BATCH_SIZE = 5000;

export interface CopiedTable {
  table: string;
  rows: number;
  /** The order-independent checksum both sides agreed on (column-values.ts, TableChecksum). */
  checksum: string;
}

export interface CopyReport {
  snapshotAt: Date;
  migrationsApplied: string[];
  tables: CopiedTable[];
  sequences: string[];
}

/**
 * Copies a SQLite deployment into an empty PostgreSQL database, all or nothing: in one target
 * transaction it applies our migrations, inserts every table's rows (parents before children),
 * moves sequences past the copied values, then reads every table back and compares its row count
 * and checksum with the source's, computed the same way from the snapshot's values. Any
 * difference, or any error, rolls the whole transaction back.
 */
export async function copyDatabase(sqlitePath: string, targetUrl: string, progress: (line: string) => void = () => {}): Promise<CopyReport> {
  const source = new SqliteSnapshot(sqlitePath);
  try {
    // The source must have exactly our schema: the target gets it from the same migrations.
    const expected = MIGRATIONS.map((m) => new m().name);
    const applied = source.appliedMigrations();
    const missing = expected.filter((name) => !applied.includes(name));
    const unknown = applied.filter((name) => !expected.includes(name));
    if (unknown.length > 0) throw new CopyRefused(`the SQLite database has migrations this version does not know (${unknown.join(', ')}): run db:copy from the Latchkey version that serves it`);
    if (missing.length > 0) throw new CopyRefused(`the SQLite database lacks ${missing.length} migration(s) (${missing.join(', ')}): run migrations:run on it (or start the server once) first`);

    const target = await PostgresTarget.open(targetUrl);
    try {
      await target.assertEmpty();
      const migrationsApplied = await target.migrate();
      const tables = await target.tablesInCopyOrder();
      const sourceTables = source.tables();
      const strays = [...sourceTables.filter((t) => !tables.includes(t)), ...tables.filter((t) => !sourceTables.includes(t))];
      if (strays.length > 0) throw new CopyRefused(`the two schemas differ in tables ${strays.join(', ')}: the SQLite database was changed outside Latchkey's migrations`);

      const copied: CopiedTable[] = [];
      const sequences: string[] = [];
      for (const table of tables) {
        const columns = await target.columns(table);
        const sourceColumns = source.columns(table);
        const differ = [...columns.map((c) => c.name).filter((c) => !sourceColumns.includes(c)), ...sourceColumns.filter((c) => !columns.some((t) => t.name === c))];
        if (differ.length > 0) throw new CopyRefused(`${table}: the two schemas differ in columns ${differ.join(', ')}`);
        const sent = new TableChecksum(columns.map((c) => c.kind));
        for (const batch of source.batches(table, columns.map((c) => c.name), BATCH_SIZE)) {
          for (const row of batch) sent.add(row);
          await target.insert(table, columns, batch);
        }
        sequences.push(...(await target.fixSequences(table, columns)));
        const received = await target.checksum(table, columns);
        if (received.rows !== sent.rows || received.digest !== sent.digest) {
          throw new CopyRefused(`${table}: verification failed (SQLite ${sent.rows} rows, checksum ${sent.digest}; PostgreSQL ${received.rows} rows, checksum ${received.digest})`);
        }
        copied.push({ table, rows: sent.rows, checksum: sent.digest });
        progress(`${table}: ${sent.rows} rows copied and verified`);
      }
      await target.commit();
      return { snapshotAt: source.takenAt, migrationsApplied, tables: copied, sequences };
    } finally {
      await target.close();
    }
  } finally {
    source.close();
  }
}
