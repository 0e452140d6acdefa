import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { runCli } from '../helpers/cli.js';
import { basicAuth } from '../helpers/oauth-flow.js';
import { startAsNpmStart, stopServer } from '../helpers/npm-start.js';
import { dropTestDatabase } from '../helpers/test-database.js';

/**
 * Issue 36, "from one file to a cluster": `npx latchkey db:copy --to postgres://…` copies a running
 * SQLite deployment (100,000 items and more) into an empty PostgreSQL database, and a server
 * started on the copy serves the tokens issued before it. Both servers run as processes of their
 * own: a process's entities are of one dialect. The target is a database of its own on the local
 * PostgreSQL server, created and dropped here, whichever database the rest of the suite uses.
 */

const ITEMS = 100_000;
const id = `${process.pid}_${randomBytes(4).toString('hex')}`;
const SERVER_URL = new URL(process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres');
const databaseUrl = (name: string): string => Object.assign(new URL(SERVER_URL.href), { pathname: `/${name}` }).href;

async function onServer<T>(database: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl(database) });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const sqlitePath = (name: string): string => join(tmpdir(), `latchkey-copy-${id}-${name}.sqlite`);
const removeSqlite = (path: string): Promise<void[]> => Promise.all([path, `${path}-wal`, `${path}-shm`].map((p) => rm(p, { force: true })));

async function json(response: Response): Promise<Record<string, unknown>> {
  return (await response.json()) as Record<string, unknown>;
}

describe('db:copy, a SQLite deployment into an empty PostgreSQL database', () => {
  const source = sqlitePath('source');
  const targets: string[] = [];
  const servers: (ChildProcess | undefined)[] = [];

  async function newTarget(): Promise<string> {
    const name = `latchkey_copy_${id}_${targets.length}`;
    await onServer(SERVER_URL.pathname.slice(1) || 'postgres', (client) => client.query(`CREATE DATABASE "${name}"`));
    targets.push(name);
    return name;
  }

  afterAll(async () => {
    for (const server of servers) await stopServer(server);
    for (const name of targets) await onServer(SERVER_URL.pathname.slice(1) || 'postgres', (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    await removeSqlite(source);
    await dropTestDatabase();
  });

  it('copies every table in one verified transaction, and the copy serves the tokens issued before it', async () => {
    const sqliteEnv = { DATABASE_URL: `sqlite:${source}` };
    // The SQLite deployment, running, with a person, a client and tokens issued to it.
    const { server: sqliteServer, issuer } = await startAsNpmStart({ ...sqliteEnv, DATABASE_SCHEMA: undefined, MIGRATIONS_RUN: undefined, PASSWORD_GRANT_REFRESH_TOKENS: 'true', RATE_LIMIT_API_PER_MINUTE: '0' });
    servers.push(sqliteServer);
    expect((await runCli(['users:create', '--username', 'ada', '--password', 'correct horse battery staple'], { env: sqliteEnv })).code).toBe(0);
    const created = await runCli(['clients:create', '--name', 'Copied app', '--grant-type', 'password', '--grant-type', 'refresh_token', '--scope', 'notes:read notes:write'], { env: sqliteEnv });
    expect(created.code).toBe(0);
    const { client_id: clientId, client_secret: clientSecret } = JSON.parse(created.stdout) as { client_id: string; client_secret: string };
    const token = await json(
      await fetch(new URL('/token', issuer), {
        method: 'POST',
        headers: { Authorization: basicAuth(clientId, clientSecret), 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'password', username: 'ada', password: 'correct horse battery staple', scope: 'notes:read notes:write' }),
      }),
    );
    expect(token).toMatchObject({ access_token: expect.any(String), refresh_token: expect.any(String) });
    const bearer = { Authorization: `Bearer ${token.access_token as string}` };
    const note = await json(await fetch(new URL('/api/v1/notes', issuer), { method: 'POST', headers: { ...bearer, 'Content-Type': 'application/json' }, body: JSON.stringify({ title: 'before the copy', tags: ['ü', 'x'] }) }));

    // 100,000 more items, written straight into the file while the server runs (WAL: it keeps serving).
    const db = new Database(source, { timeout: 5000 });
    const owner = (db.prepare(`SELECT id FROM users WHERE username = 'ada'`).get() as { id: string }).id;
    db.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO items (id, collection, owner_id, data, version, created_at, updated_at)
       SELECT lower(printf('%08x-0000-4000-8000-%012x', i, i)), 'notes', ?, json_object('title', 'note ' || i, 'done', json(CASE i % 2 WHEN 0 THEN 'true' ELSE 'false' END), 'n', i),
              1 + i % 3, strftime('%Y-%m-%d %H:%M:%f', 'now', '-' || i || ' seconds'), strftime('%Y-%m-%d %H:%M:%f', 'now') FROM n`,
    ).run(ITEMS, owner);
    const sourceCounts = Object.fromEntries(
      (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'migrations'`).all() as { name: string }[]).map(({ name }) => [name, (db.prepare(`SELECT count(*) AS n FROM "${name}"`).get() as { n: number }).n]),
    );
    db.close();
    expect(sourceCounts.items).toBe(ITEMS + 1);

    // The copy, from the running deployment, which keeps serving writes meanwhile: the copy is
    // the snapshot of its first read, whole and consistent, and the server is not held up.
    const target = await newTarget();
    const started = Date.now();
    const copying = runCli(['db:copy', '--to', databaseUrl(target)], { env: sqliteEnv });
    let done = false;
    void copying.then(() => (done = true));
    let writesDuringCopy = 0;
    while (!done) {
      const written = await fetch(new URL('/api/v1/notes', issuer), { method: 'POST', headers: { ...bearer, 'Content-Type': 'application/json' }, body: JSON.stringify({ title: `during the copy ${writesDuringCopy}` }) });
      expect(written.status).toBe(201);
      writesDuringCopy++;
    }
    const copy = await copying;
    expect({ code: copy.code, stderr: copy.stderr.split('\n').filter((line) => line && !/rows copied and verified$/.test(line)) }).toEqual({ code: 0, stderr: [] });
    const report = JSON.parse(copy.stdout) as { tables: { table: string; rows: number; checksum: string }[]; total_rows: number; environment: { set: Record<string, string>; notes: string[] } };
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(writesDuringCopy).toBeGreaterThan(0);
    const copiedCounts = Object.fromEntries(report.tables.map((t) => [t.table, t.rows]));
    expect(copiedCounts.items).toBeGreaterThanOrEqual(sourceCounts.items);
    expect(copiedCounts.items).toBeLessThanOrEqual(sourceCounts.items + writesDuringCopy);
    expect({ ...copiedCounts, items: 0 }).toEqual({ ...sourceCounts, items: 0 });
    expect(report.tables.every((t) => /^[0-9a-f]{64}$/.test(t.checksum))).toBe(true);
    expect(report.environment.set).toEqual({ DATABASE_URL: databaseUrl(target) });
    expect(report.environment.notes.join(' ')).toContain('Stop the server before copying');
    await stopServer(sqliteServer);

    // The counts the copy reported are PostgreSQL's, and the copied deployment serves the same tokens.
    const targetCounts = await onServer(target, async (client) =>
      Object.fromEntries(await Promise.all(Object.keys(sourceCounts).map(async (table) => [table, Number((await client.query(`SELECT count(*) AS n FROM "${table}"`)).rows[0].n)]))),
    );
    expect(targetCounts).toEqual(copiedCounts);
    const { server: pgServer, issuer: pgIssuer } = await startAsNpmStart({ DATABASE_URL: databaseUrl(target), DATABASE_SCHEMA: undefined, MIGRATIONS_RUN: 'false', PASSWORD_GRANT_REFRESH_TOKENS: 'true' });
    servers.push(pgServer);
    const read = await fetch(new URL(`/api/v1/notes/${note.id as string}`, pgIssuer), { headers: bearer });
    expect(read.status).toBe(200);
    expect(await json(read)).toMatchObject({ id: note.id, title: 'before the copy', tags: ['ü', 'x'] });
    const copied = await fetch(new URL('/api/v1/notes/00000007-0000-4000-8000-000000000007', pgIssuer), { headers: bearer });
    expect(await json(copied)).toMatchObject({ title: 'note 7', done: false, n: 7 });
    const refreshed = await fetch(new URL('/token', pgIssuer), {
      method: 'POST',
      headers: { Authorization: basicAuth(clientId, clientSecret), 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token.refresh_token as string }),
    });
    expect(refreshed.status).toBe(200);
    // A write on the copy: nothing collides with the copied rows.
    const written = await fetch(new URL('/api/v1/notes', pgIssuer), { method: 'POST', headers: { ...bearer, 'Content-Type': 'application/json' }, body: JSON.stringify({ title: 'after the copy' }) });
    expect(written.status).toBe(201);
    await stopServer(pgServer);

    // A second copy into the same database is refused, and changes nothing.
    const again = await runCli(['db:copy', '--to', databaseUrl(target)], { env: sqliteEnv });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/the target database is not empty \(rows in .*items.*\).*nothing was written to the target/);
    expect(await onServer(target, async (client) => Number((await client.query('SELECT count(*) AS n FROM items')).rows[0].n))).toBe(copiedCounts.items + 1);
  }, 120_000);

  it('is all or nothing: a row PostgreSQL refuses leaves the target without a table', async () => {
    const broken = sqlitePath('broken');
    const env = { DATABASE_URL: `sqlite:${broken}` };
    try {
      expect((await runCli(['migrations:run'], { env })).code).toBe(0);
      expect((await runCli(['users:create', '--username', 'grace', '--password', 'correct horse battery staple'], { env })).code).toBe(0);
      // SQLite does not enforce varchar lengths; PostgreSQL does. audit_events comes first, users later.
      const db = new Database(broken);
      db.prepare(`UPDATE users SET username = ?`).run('g'.repeat(65));
      db.close();
      const target = await newTarget();
      const copy = await runCli(['db:copy', '--to', databaseUrl(target)], { env });
      expect(copy.code).toBe(1);
      expect(copy.stderr).toMatch(/db:copy failed and was rolled back, nothing was written to the target: .*too long/);
      expect(await onServer(target, async (client) => (await client.query(`SELECT tablename FROM pg_tables WHERE schemaname = 'public'`)).rows)).toEqual([]);
    } finally {
      await removeSqlite(broken);
    }
  });

  it('refuses a source that is not SQLite, a target that is not PostgreSQL, and a missing file, with the reason', async () => {
    expect(await runCli(['db:copy', '--to', 'mysql://x'], { env: { DATABASE_URL: `sqlite:${source}` } })).toMatchObject({ code: 1, stderr: expect.stringContaining('--to must be a postgres:// or postgresql:// URL') });
    expect(await runCli(['db:copy', '--to', databaseUrl('x'), '--from', 'postgres://a:secret@h/db'])).toMatchObject({ code: 1, stderr: expect.stringMatching(/copies a SQLite deployment; the source is postgres:\/\/a:\*\*\*@h\/db/) });
    const missing = await runCli(['db:copy', '--to', databaseUrl('x'), '--from', `sqlite:${sqlitePath('missing')}`]);
    expect(missing).toMatchObject({ code: 1, stderr: expect.stringContaining('no such database') });
  });
});
