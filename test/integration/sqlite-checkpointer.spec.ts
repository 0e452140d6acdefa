import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { SqliteCheckpointer } from '../../src/database/sqlite-checkpointer.js';
import { TestApp } from '../helpers/test-app.js';

async function autocheckpoint(dataSource: DataSource): Promise<number> {
  const [row] = (await dataSource.query('PRAGMA wal_autocheckpoint')) as { wal_autocheckpoint: number }[];
  return row.wal_autocheckpoint;
}

async function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Checkpoints in a worker thread (src/database/sqlite-checkpointer.ts), on a real SQLite file in
 * WAL mode. It is SQLite's mechanism, so this part uses SQLite whatever database the suite runs on.
 */
describe('SQLite checkpoints in a worker thread', () => {
  let dir: string;
  let file: string;
  let dataSource: DataSource;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'latchkey-checkpointer-'));
    file = join(dir, 'db.sqlite');
    dataSource = new DataSource({ type: 'better-sqlite3', database: file, enableWAL: true });
    await dataSource.initialize();
    await dataSource.query('CREATE TABLE "pages" ("id" INTEGER PRIMARY KEY, "data" BLOB NOT NULL)');
    // Start from an empty WAL, so the file holds only the table's first page.
    await dataSource.query('PRAGMA wal_checkpoint(TRUNCATE)');
  });
  afterEach(async () => {
    await dataSource?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Writes about 2,000 pages: two automatic checkpoints' worth at SQLite's default. */
  async function writePages(): Promise<void> {
    for (let batch = 0; batch < 20; batch++) {
      await dataSource.transaction(async (manager) => {
        for (let i = 0; i < 100; i++) await manager.query('INSERT INTO "pages" ("data") VALUES (randomblob(3500))');
      });
    }
  }

  it('turns automatic checkpoints off on the server\'s connection, and the worker copies the WAL back into the file', async () => {
    const checkpointer = new SqliteCheckpointer(dataSource);
    await checkpointer.start(file);
    try {
      expect(checkpointer.running).toBe(true);
      expect(await autocheckpoint(dataSource)).toBe(0);
      const before = statSync(file).size;
      await writePages();
      // Every frame of the WAL copied back by the worker: the database file now holds the rows.
      await until(() => checkpointer.last !== undefined && checkpointer.last.log >= 2000 && checkpointer.last.checkpointed === checkpointer.last.log);
      expect(statSync(file).size).toBeGreaterThan(before + 2000 * 3500);
    } finally {
      await checkpointer.onModuleDestroy();
    }
    expect(checkpointer.running).toBe(false);
  });

  it('without the worker and with automatic checkpoints off, the rows stay in the WAL (the control for the test above)', async () => {
    await dataSource.query('PRAGMA wal_autocheckpoint = 0');
    const before = statSync(file).size;
    await writePages();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(statSync(file).size).toBe(before);
  });

  it('leaves SQLite\'s automatic checkpoints on when the worker cannot open the database', async () => {
    const checkpointer = new SqliteCheckpointer(dataSource);
    await checkpointer.start(join(dir, 'missing', 'db.sqlite'));
    expect(checkpointer.running).toBe(false);
    expect(await autocheckpoint(dataSource)).toBe(1000);
  });
});

describe('the server', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await TestApp.start();
  });
  afterAll(async () => app?.stop());

  it('checkpoints SQLite in its worker, and leaves PostgreSQL to itself', async () => {
    const checkpointer = app.app.get(SqliteCheckpointer);
    if (app.dataSource.options.type === 'postgres') {
      expect(checkpointer.running).toBe(false);
    } else {
      expect(checkpointer.running).toBe(true);
      expect(await autocheckpoint(app.dataSource)).toBe(0);
    }
  });

  it('runs the worker from its own file, built next to the checkpointer (dist/ when started with npm start)', () => {
    // Here, under Jest, the worker is src/database/sqlite-checkpoint.worker.ts (the tests above ran it).
    const built = (file: string) => existsSync(new URL(`../../dist/src/database/${file}`, import.meta.url));
    expect(built('sqlite-checkpointer.js') && built('sqlite-checkpoint.worker.js')).toBe(true);
  });
});
