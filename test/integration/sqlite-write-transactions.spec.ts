import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { readDatabaseConfig } from '../../src/config/database.config.js';
import { buildDataSourceOptions } from '../../src/schema/data-source.options.js';

/**
 * Issue 43: on SQLite every transaction begins as a writer (src/database/sqlite-write-transactions.ts),
 * through the one data source description the server, the CLI and migrations share. It rewrites the
 * statement TypeORM begins with, so this file also notices a TypeORM that begins another way. It is
 * SQLite's mechanism, so this file uses SQLite whatever database the suite runs on.
 */
describe('SQLite transactions begin as writers', () => {
  let dir: string;
  let file: string;
  let dataSource: DataSource;
  /** Another process's connection (the CLI while the server runs): it does not wait for a lock. */
  let other: Database.Database;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'latchkey-write-transactions-'));
    file = join(dir, 'db.sqlite');
    const options = buildDataSourceOptions(readDatabaseConfig({ DATABASE_URL: `sqlite:${file}`, MIGRATIONS_RUN: 'false' }));
    // No entities: their column types follow the suite's dialect, which may be PostgreSQL's.
    dataSource = new DataSource({ ...options, entities: [], migrations: [] });
    await dataSource.initialize();
    await dataSource.query('CREATE TABLE "rows" ("id" TEXT PRIMARY KEY NOT NULL)');
    other = new Database(file, { timeout: 0 });
  });
  afterAll(async () => {
    other?.close();
    await dataSource?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('holds the write lock from BEGIN, before its first statement (BEGIN IMMEDIATE)', async () => {
    const runner = dataSource.createQueryRunner();
    await runner.startTransaction();
    try {
      expect(() => other.exec('BEGIN IMMEDIATE')).toThrow(expect.objectContaining({ code: 'SQLITE_BUSY' }) as Error);
    } finally {
      await runner.rollbackTransaction();
    }
    // Once it ends, the other connection writes as usual.
    other.exec('BEGIN IMMEDIATE; INSERT INTO "rows" ("id") VALUES (\'after\'); COMMIT');
  });

  it('so a transaction that reads before it writes cannot be outdated by another connection\'s commit', async () => {
    const outcome = await dataSource.transaction(async (manager) => {
      await manager.query('SELECT count(*) AS "n" FROM "rows"');
      // Another process commits between the read and the write: with a deferred BEGIN this made the
      // write below fail at once with SQLITE_BUSY_SNAPSHOT; now the other writer is the one to wait.
      let otherWrite = 'committed';
      try {
        other.exec('INSERT INTO "rows" ("id") VALUES (\'other\')');
      } catch (error) {
        otherWrite = (error as { code: string }).code;
      }
      await manager.query('INSERT INTO "rows" ("id") VALUES (?)', ['mine']);
      return otherWrite;
    });
    expect(outcome).toBe('SQLITE_BUSY');
    expect(other.prepare('SELECT "id" FROM "rows" ORDER BY "id"').pluck().all()).toEqual(['after', 'mine']);
  });

  it('keeps a busy timeout, so a writer waits for another instead of failing', async () => {
    expect(await dataSource.query('PRAGMA busy_timeout')).toEqual([{ timeout: 5000 }]);
  });
});
