import { randomBytes, randomUUID } from 'node:crypto';
import { jest } from '@jest/globals';
import { DataSource } from 'typeorm';
import { LookupBatch } from '../../src/database/lookup-batch.js';
import { postgresPool, UNNAMED_STATEMENTS } from '../../src/database/prepared-statement.js';

/**
 * src/database/lookup-batch.ts, the grouped single-row reads of the hot path (an item by id, a token
 * or code by its hash), against the machine's PostgreSQL (TEST_DATABASE_URL, or the local server
 * every machine of ours runs) in a scratch schema, and against SQLite in memory: it runs in the
 * SQLite group too, since it needs no entity of the dialect under test.
 */
describe(LookupBatch.name, () => {
  const url = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `latchkey_lookup_${randomBytes(4).toString('hex')}`;
  const select = `SELECT "id", "label" AS "name" FROM "things"`;
  let dataSource: DataSource;
  let other: DataSource;
  /** The statements the batch sent, by name, observed on the pool (each still runs). */
  let sent: string[];
  let spy: { mockRestore(): void };

  const insert = async (count: number): Promise<string[]> => {
    const ids = Array.from({ length: count }, () => randomUUID());
    await other.query(`INSERT INTO "${schema}"."things" ("id", "label") SELECT unnest($1::uuid[]), 'thing'`, [ids]);
    return ids;
  };

  beforeAll(async () => {
    const bootstrap = new DataSource({ type: 'postgres', url });
    await bootstrap.initialize();
    await bootstrap.query(`CREATE SCHEMA "${schema}"`);
    await bootstrap.query(`CREATE TABLE "${schema}"."things" ("id" uuid PRIMARY KEY, "label" text NOT NULL)`);
    await bootstrap.destroy();
    dataSource = new DataSource({ type: 'postgres', url, schema, extra: { options: `-c search_path=${schema}` } });
    other = new DataSource({ type: 'postgres', url });
    await Promise.all([dataSource.initialize(), other.initialize()]);
  });
  beforeEach(() => {
    sent = [];
    const pool = postgresPool(dataSource);
    const query = pool.query.bind(pool);
    spy = jest.spyOn(pool, 'query').mockImplementation((config) => {
      sent.push(config.name ?? '(unnamed)');
      return query(config);
    });
  });
  afterEach(() => spy.mockRestore());
  afterAll(async () => {
    await other?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await Promise.all([dataSource?.destroy(), other?.destroy()]);
  });

  it('reads the keys asked for in one turn of the event loop with one statement, and gives each caller its own row', async () => {
    const ids = await insert(20);
    const batch = new LookupBatch(dataSource, 'test_thing', select, 'id', 'id');
    const unknown = randomUUID();
    const rows = await Promise.all([...ids, unknown, ids[3]].map((id) => batch.one(id)));
    expect(rows.slice(0, 20).map((row) => row?.id)).toEqual(ids);
    expect(rows[0]).toEqual({ id: ids[0], name: 'thing' });
    expect(rows[20]).toBeUndefined();
    // The same key twice in a turn: read once, both callers get it.
    expect(rows[21]).toEqual(rows[3]);
    expect(sent).toEqual(['test_thing_any']);
  });

  it('reads a key alone in its turn with the single-row prepared statement, and sees what was committed before it was asked', async () => {
    const batch = new LookupBatch(dataSource, 'test_thing', select, 'id', 'id');
    const [id] = await insert(1);
    expect(await batch.one(id)).toEqual({ id, name: 'thing' });
    await other.query(`UPDATE "${schema}"."things" SET "label" = 'changed' WHERE "id" = $1`, [id]);
    expect(await batch.one(id)).toEqual({ id, name: 'changed' });
    await other.query(`DELETE FROM "${schema}"."things" WHERE "id" = $1`, [id]);
    expect(await batch.one(id)).toBeUndefined();
    expect(sent).toEqual(['test_thing', 'test_thing', 'test_thing']);
  });

  it('fails only the caller whose key is at fault: its neighbours in the batch get their rows', async () => {
    const ids = await insert(2);
    const batch = new LookupBatch(dataSource, 'test_thing', select, 'id', 'id');
    const outcomes = await Promise.allSettled([batch.one(ids[0]), batch.one('not-a-uuid'), batch.one(ids[1])]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ code: '22P02' });
    expect((outcomes[2] as PromiseFulfilledResult<unknown>).value).toEqual({ id: ids[1], name: 'thing' });
  });

  it('splits a turn of more than 256 keys into statements of at most 256', async () => {
    const ids = await insert(300);
    const batch = new LookupBatch(dataSource, 'test_thing', select, 'id', 'id');
    const rows = await Promise.all(ids.map((id) => batch.one(id)));
    expect(rows.map((row) => row?.id)).toEqual(ids);
    expect(sent).toEqual(['test_thing_any', 'test_thing_any']);
  });

  it('through a transaction pooler (DATABASE_POOL_MODE=transaction), names no statement: single and grouped reads are unnamed', async () => {
    const pooled = new DataSource({ type: 'postgres', url, schema, extra: { options: `-c search_path=${schema}`, [UNNAMED_STATEMENTS]: true } });
    await pooled.initialize();
    const pool = postgresPool(pooled);
    const query = pool.query.bind(pool);
    const names: (string | undefined)[] = [];
    const watch = jest.spyOn(pool, 'query').mockImplementation((config) => {
      names.push(config.name);
      return query(config);
    });
    try {
      const ids = await insert(3);
      const batch = new LookupBatch(pooled, 'test_thing', select, 'id', 'id');
      expect((await Promise.all(ids.map((id) => batch.one(id)))).map((row) => row?.id)).toEqual(ids);
      expect(await batch.one(ids[0])).toEqual({ id: ids[0], name: 'thing' });
      expect(names).toEqual([undefined, undefined]);
    } finally {
      watch.mockRestore();
      await pooled.destroy();
    }
  });

  it('on SQLite, runs the single-row statement for every key, in the process', async () => {
    const sqlite = new DataSource({ type: 'better-sqlite3', database: ':memory:' });
    await sqlite.initialize();
    try {
      await sqlite.query(`CREATE TABLE "things" ("id" varchar PRIMARY KEY, "label" varchar NOT NULL)`);
      await sqlite.query(`INSERT INTO "things" VALUES ('a', 'one'), ('b', 'two')`);
      const batch = new LookupBatch(sqlite, 'test_thing', select, 'id', 'id');
      expect(await Promise.all(['a', 'b', 'c', 'a'].map((id) => batch.one(id)))).toEqual([{ id: 'a', name: 'one' }, { id: 'b', name: 'two' }, undefined, { id: 'a', name: 'one' }]);
    } finally {
      await sqlite.destroy();
    }
  });
});
