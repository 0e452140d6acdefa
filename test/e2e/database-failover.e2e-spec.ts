/**
 * Issue 44: what an instance sees of a PostgreSQL failover, and what it answers. Patroni kills the
 * old primary's connections, brings it back read-only before it is demoted or promoted, and the
 * new primary starts up; each write meanwhile fails with 57P01, 25006 or 57P03. Every one must be
 * a 503 temporarily_unavailable with Retry-After (the client or the load balancer tries again),
 * never a 500; /health/ready must turn 503 while the database cannot write, so that the load
 * balancer stops sending; nothing of a failed write may stay; and the instance must serve again
 * by itself once the database can write, without a restart.
 *
 * PostgreSQL: the instance's role is made read-only by default (what a server in recovery, or a
 * primary not yet promoted, is for every session) and its connections are cut, as at a failover;
 * then both are undone. test/failover/ does the same with a real Patroni pair behind HAProxy.
 * SQLite has no failover; its nearest case, the file locked by another writer beyond the busy
 * timeout, must be a 503 with nothing written too.
 */
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import { readDatabaseConfig } from '../../src/config/database.config.js';
import { basicAuth } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient } from '../helpers/test-app.js';
import { within } from '../helpers/within.js';

const postgres = Boolean(process.env.TEST_DATABASE_URL);

describe('A database that cannot write, as during a failover: 503 and recovery by itself, never a 500', () => {
  const role = `latchkey_failover_${randomBytes(4).toString('hex')}`;
  const adminUrl = process.env.TEST_DATABASE_URL || '';
  let app: TestApp;
  let client: RegisteredClient;

  const admin = async (sql: string): Promise<void> => {
    const connection = new pg.Client({ connectionString: adminUrl });
    await connection.connect();
    try {
      await connection.query(sql);
    } finally {
      await connection.end();
    }
  };

  /** A token request (a write: the token's row); its status, Retry-After and error. */
  const issue = async () => {
    const response = await fetch(app.url('/token'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(client.clientId, client.clientSecret!) },
      body: 'grant_type=client_credentials',
    });
    const body = (await response.json()) as { error?: string };
    return { status: response.status, retryAfter: response.headers.get('retry-after'), error: body.error };
  };
  const readiness = async () => (await fetch(app.url('/health/ready'))).status;
  const tokensOfClient = async () => Number(((await app.dataSource.query(postgres ? 'SELECT count(*) AS n FROM "tokens" WHERE "client_id" = $1' : 'SELECT count(*) AS n FROM "tokens" WHERE "client_id" = ?', [client.clientId])) as { n: string | number }[])[0].n);

  beforeAll(async () => {
    if (postgres) {
      // A role of its own, so that making it read-only touches no other test; trust auth, as everywhere here.
      await admin(`CREATE ROLE "${role}" LOGIN SUPERUSER`);
      const url = new URL(adminUrl);
      url.username = role;
      app = await TestApp.start({ DATABASE_URL: url.toString() });
    } else {
      app = await TestApp.start();
    }
    client = await app.createClient({ scope: 'notes:read', grantTypes: ['client_credentials'] as never });
  });
  afterAll(async () => {
    await app?.stop();
    if (postgres) {
      process.env.DATABASE_URL = adminUrl;
      await admin(`DROP ROLE IF EXISTS "${role}"`);
    }
  });

  const wrongAnswers = (answers: Awaited<ReturnType<typeof issue>>[]) =>
    answers.filter((answer) => answer.status !== 503 || answer.retryAfter !== '5' || answer.error !== 'temporarily_unavailable');

  if (postgres) {
    it('PostgreSQL: connections cut and the server read-only answer 503 with Retry-After, readiness goes 503, nothing is written; once writable, the same process serves again', async () => {
      expect(await issue()).toMatchObject({ status: 200 });
      const before = await tokensOfClient();

      // The failover begins: every new session is read-only (25006 on a write), and the open ones are cut (57P01).
      await admin(`ALTER ROLE "${role}" SET default_transaction_read_only = on`);
      await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '${role}'`);
      const during = [];
      for (let i = 0; i < 8; i++) during.push(await issue());
      expect(wrongAnswers(during)).toEqual([]);
      expect(await within(5000, async () => (await readiness()) === 503)).toBe(true);

      // The promotion: sessions may write again (the open read-only ones are cut, as HAProxy does when the leader moves).
      await admin(`ALTER ROLE "${role}" RESET default_transaction_read_only`);
      await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '${role}'`);
      expect(await within(10_000, async () => (await readiness()) === 200)).toBe(true);
      expect(await within(10_000, async () => (await issue()).status === 200)).toBe(true);
      // One token answered 200 since `before`, and one row: the refused writes left nothing.
      expect((await tokensOfClient()) - before).toBe(1);
    });
  } else {
    it('SQLite: a file locked by another writer beyond the busy timeout answers 503 with Retry-After and writes nothing; once free, the same process serves again', async () => {
      expect(await issue()).toMatchObject({ status: 200 });
      const before = await tokensOfClient();
      const other = new Database(readDatabaseConfig().sqlitePath!);
      try {
        other.exec('BEGIN IMMEDIATE');
        // The server waits out its 5 s busy timeout, then gives up on this write.
        expect(wrongAnswers([await issue()])).toEqual([]);
      } finally {
        other.exec('ROLLBACK');
        other.close();
      }
      expect(await issue()).toMatchObject({ status: 200 });
      expect((await tokensOfClient()) - before).toBe(1);
    });
  }
});
