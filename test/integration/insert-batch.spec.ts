import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { InsertBatch } from '../../src/database/insert-batch.js';

/**
 * src/database/insert-batch.ts, PostgreSQL's group commit for the token and jti INSERTs, against the
 * machine's PostgreSQL (TEST_DATABASE_URL, or the local server every machine of ours runs) in a
 * scratch schema: it runs in the SQLite group too, since it needs no entity of the dialect under test.
 */
describe(InsertBatch.name, () => {
  const url = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `latchkey_batch_${randomBytes(4).toString('hex')}`;
  let dataSource: DataSource;
  let other: DataSource;

  const rows = async (): Promise<{ id: string; n: number; tx: string }[]> =>
    other.query(`SELECT "id", "n", xmin::text AS "tx" FROM "${schema}"."uses" ORDER BY "n"`) as Promise<{ id: string; n: number; tx: string }[]>;

  beforeAll(async () => {
    const bootstrap = new DataSource({ type: 'postgres', url });
    await bootstrap.initialize();
    await bootstrap.query(`CREATE SCHEMA "${schema}"`);
    await bootstrap.query(`CREATE TABLE "${schema}"."uses" ("id" text PRIMARY KEY, "n" integer NOT NULL CHECK ("n" >= 0))`);
    await bootstrap.destroy();
    dataSource = new DataSource({ type: 'postgres', url, schema, extra: { options: `-c search_path=${schema}` } });
    other = new DataSource({ type: 'postgres', url });
    await Promise.all([dataSource.initialize(), other.initialize()]);
  });
  afterEach(async () => other.query(`DELETE FROM "${schema}"."uses"`));
  afterAll(async () => {
    await other?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await Promise.all([dataSource?.destroy(), other?.destroy()]);
  });

  it('writes the rows submitted in one turn of the event loop with one statement, committed before any promise settles', async () => {
    const batch = new InsertBatch(dataSource, 'test_uses', 'uses', ['id', 'n']);
    const results = await Promise.all(Array.from({ length: 20 }, (_, n) => batch.insert([[`u${n}`, n]])));
    expect(results).toEqual(Array.from({ length: 20 }, () => [true]));
    const stored = await rows();
    expect(stored.map((row) => row.n)).toEqual(Array.from({ length: 20 }, (_, n) => n));
    // One transaction id for all: one autocommitted statement.
    expect(new Set(stored.map((row) => row.tx)).size).toBe(1);
  });

  it('writes rows submitted in different turns with different statements', async () => {
    const batch = new InsertBatch(dataSource, 'test_uses', 'uses', ['id', 'n']);
    await batch.insert([['a', 1]]);
    await batch.insert([['b', 2]]);
    expect(new Set((await rows()).map((row) => row.tx)).size).toBe(2);
  });

  it("fails only the request whose rows are at fault: its neighbours' rows are stored", async () => {
    const batch = new InsertBatch(dataSource, 'test_uses', 'uses', ['id', 'n']);
    const outcomes = await Promise.allSettled([batch.insert([['ok1', 1]]), batch.insert([['bad', -1], ['bad2', 2]]), batch.insert([['ok3', 3]])]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ code: '23514' });
    // Nothing half-written: neither of the failing request's two rows.
    expect((await rows()).map((row) => row.id)).toEqual(['ok1', 'ok3']);
  });

  it('gives every request of a batch whose connection was lost the error, and tries none of them again: whether that statement committed is unknown', async () => {
    const batch = new InsertBatch(dataSource, 'test_uses', 'uses', ['id', 'n']);
    // Hold the batch's INSERT on a lock, then cut its connection as a crashing primary would.
    const locker = other.createQueryRunner();
    await locker.connect();
    await locker.startTransaction();
    await locker.query(`LOCK TABLE "${schema}"."uses" IN EXCLUSIVE MODE`);
    const outcomes = Promise.allSettled([batch.insert([['cut1', 1]]), batch.insert([['cut2', 2]]), batch.insert([['cut3', 3]])]);
    let terminated = 0;
    for (let attempt = 0; attempt < 100 && terminated === 0; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const [row] = (await other.query(
        `SELECT count(pg_terminate_backend(pid))::int AS "n" FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO "uses"%'`,
      )) as { n: number }[];
      terminated = row.n;
    }
    await locker.rollbackTransaction();
    await locker.release();
    expect(terminated).toBe(1);
    const settled = await outcomes;
    expect(settled.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected']);
    // 57P01 (terminating connection due to administrator command): what the request answers as 503.
    expect((settled[0] as PromiseRejectedResult).reason).toMatchObject({ code: '57P01' });
    // Nothing written by a retry on a new connection.
    expect(await rows()).toEqual([]);
  });

  it('with a conflict key, tells each request whether its row went in: the first of two equal keys in one batch wins, a key stored before loses', async () => {
    const batch = new InsertBatch(dataSource, 'test_uses_once', 'uses', ['id', 'n'], 'id');
    expect(await batch.insert([['seen', 0]])).toEqual([true]);
    const results = await Promise.all([batch.insert([['twice', 1]]), batch.insert([['seen', 2]]), batch.insert([['twice', 3]]), batch.insert([['fresh', 4]])]);
    expect(results).toEqual([[true], [false], [false], [true]]);
    expect((await rows()).map((row) => [row.id, row.n])).toEqual([['seen', 0], ['twice', 1], ['fresh', 4]]);
  });

  it('splits a large batch into statements of at most 64 rows, each request whole in one of them', async () => {
    const batch = new InsertBatch(dataSource, 'test_uses', 'uses', ['id', 'n']);
    await Promise.all(Array.from({ length: 50 }, (_, i) => batch.insert([[`p${i}`, 2 * i], [`q${i}`, 2 * i + 1]])));
    const stored = await rows();
    expect(stored).toHaveLength(100);
    const statements = new Map<string, number>();
    for (const row of stored) statements.set(row.tx, (statements.get(row.tx) ?? 0) + 1);
    expect([...statements.values()].every((count) => count <= 64)).toBe(true);
    expect(statements.size).toBe(2);
    // A request's two rows are in the same statement.
    for (let i = 0; i < 50; i++) expect(stored[2 * i].tx).toBe(stored[2 * i + 1].tx);
  });
});
