import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { ClientsService } from '../../src/clients/clients.service.js';
import { GrantType } from '../../src/common/oauth.constants.js';
import { readDatabaseConfig } from '../../src/config/database.config.js';
import { MIGRATIONS } from '../../src/schema/migrations/index.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { runCli } from '../helpers/cli.js';
import { dropTestDatabase } from '../helpers/test-database.js';

/**
 * Issue 36: `npx latchkey doctor [--url …] [--json]` against this file's deployment (the server
 * runs; doctor is a process of its own with the server's environment), then against deliberately
 * broken variants of that environment.
 */

interface Report {
  ok: boolean;
  failures: number;
  warnings: number;
  checks: { id: string; status: 'ok' | 'warn' | 'fail' | 'skip'; detail: string; fix?: string }[];
}

const IDS = ['configuration', 'production', 'tls', 'rate_limits', 'database', 'clock', 'pool', 'pooler', 'listen', 'migrations', 'signing_keys', 'legacy_grants', 'redis', 'issuer', 'health', 'metrics', 'mail'];

/**
 * The PostgreSQL server of the test runs is shared with other runs, whose instances hold many of
 * its connections: a small pool keeps the headroom check about this deployment.
 */
const SMALL_POOL = { DATABASE_POOL_SIZE: '2' };

async function doctor(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; report: Report; stderr: string }> {
  const result = await runCli(['doctor', '--json', ...args], { env: { ...SMALL_POOL, ...env } });
  return { code: result.code, report: JSON.parse(result.stdout) as Report, stderr: result.stderr };
}

const check = (report: Report, id: string) => report.checks.find((c) => c.id === id);

describe('doctor', () => {
  let nest: NestFastifyApplication;
  let issuer: string;

  beforeAll(async () => {
    ({ nest, issuer } = await startAtIssuer().then(({ nest, issuer }) => ({ nest, issuer: issuer.origin })));
  });
  afterAll(async () => {
    await nest?.close();
    await dropTestDatabase();
  });

  it('passes a healthy deployment, and says so in JSON with one entry per check', async () => {
    const { code, report, stderr } = await doctor(['--url', issuer]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(report).toMatchObject({ ok: true, failures: 0 });
    expect(report.checks.map((c) => c.id)).toEqual(IDS);
    for (const each of report.checks) {
      expect(Object.keys(each).sort()).toEqual(each.status === 'warn' || each.status === 'fail' ? ['detail', 'fix', 'id', 'status'] : ['detail', 'id', 'status']);
    }
    expect(report.checks.filter((c) => c.status === 'fail')).toEqual([]);
    expect(check(report, 'migrations')).toMatchObject({ status: 'ok', detail: `All ${MIGRATIONS.length} migrations are applied.` });
    expect(check(report, 'health')).toMatchObject({ status: 'ok' });
    // The server generated its signing keys at start: one signs per algorithm.
    expect(check(report, 'signing_keys')).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^RS256: generation 1 signs since .*; ES256: generation 1 signs since .*; EdDSA: generation 1 signs since/) });
    // http on loopback: a warning, not a failure, outside production.
    expect(check(report, 'issuer')).toMatchObject({ status: 'warn', detail: `${issuer} announces itself as the issuer, over plain http.` });
  });

  it('prints a readable report by default', async () => {
    const result = await runCli(['doctor'], { env: SMALL_POOL });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ok {4}configuration {2}Every setting is valid\.$/m);
    expect(result.stdout).toMatch(/^-- {4}issuer +Give --url/m);
    expect(result.stdout).toMatch(/No failures(, \d+ warning\(s\) to review)?\.\n$/);
  });

  it('fails when ISSUER is not the URL clients reach, with the fix', async () => {
    const { code, report } = await doctor(['--url', issuer], { ISSUER: 'https://auth.example.com' });
    expect(code).toBe(1);
    expect(check(report, 'issuer')).toEqual({
      id: 'issuer',
      status: 'fail',
      detail: expect.stringContaining(`Clients reach the deployment at ${issuer}, but ISSUER is https://auth.example.com`),
      fix: expect.stringContaining('Set ISSUER to the exact public URL clients use'),
    });
  });

  it('fails when the signing keys do not open with SIGNING_KEY_ENCRYPTION_KEY', async () => {
    // The server sealed its keys with the generated key; an instance given another one could not sign.
    const { code, report } = await doctor([], { SIGNING_KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64') });
    expect(code).toBe(1);
    expect(check(report, 'signing_keys')).toMatchObject({ status: 'fail', detail: expect.stringMatching(/^The private half of RS256 key \S+, ES256 key \S+, EdDSA key \S+ does not open with SIGNING_KEY_ENCRYPTION_KEY/), fix: expect.stringContaining('newest first') });
  });

  it('fails when Redis is configured but does not answer', async () => {
    const { code, report } = await doctor([], { REDIS_URL: 'redis://127.0.0.1:1' });
    expect(code).toBe(1);
    expect(check(report, 'redis')).toMatchObject({ status: 'fail', detail: expect.stringContaining('REDIS_URL is set but Redis does not answer'), fix: expect.stringContaining('correct REDIS_URL') });
  });

  it('fails on a configuration the server would refuse, and checks nothing else', async () => {
    const { code, report } = await doctor([], { RATE_LIMIT_API_PER_MINUTE: 'lots' });
    expect(code).toBe(1);
    expect(report.checks).toEqual([expect.objectContaining({ id: 'configuration', status: 'fail', detail: expect.stringContaining('RATE_LIMIT_API_PER_MINUTE: must be a number') })]);
  });

  it('fails when a migration is not applied, naming it and the command that applies it', async () => {
    const config = readDatabaseConfig();
    const last = new MIGRATIONS[MIGRATIONS.length - 1]().name;
    const suffix = randomBytes(4).toString('hex');
    if (config.dialect === 'sqlite') {
      const path = join(tmpdir(), `latchkey-doctor-${suffix}.sqlite`);
      const env = { DATABASE_URL: `sqlite:${path}` };
      try {
        expect((await runCli(['migrations:run'], { env })).code).toBe(0);
        const db = new Database(path);
        db.prepare('DELETE FROM migrations WHERE name = ?').run(last);
        db.close();
        const { code, report } = await doctor([], env);
        expect(code).toBe(1);
        expect(check(report, 'migrations')).toEqual({ id: 'migrations', status: 'fail', detail: `1 migration(s) not applied: ${last}.`, fix: expect.stringContaining('npx latchkey migrations:run') });
      } finally {
        await Promise.all([path, `${path}-wal`, `${path}-shm`].map((p) => rm(p, { force: true })));
      }
    } else {
      const schema = `latchkey_doctor_${suffix}`;
      const client = new pg.Client({ connectionString: config.url });
      await client.connect();
      try {
        await client.query(`CREATE SCHEMA "${schema}"`);
        expect((await runCli(['migrations:run'], { env: { DATABASE_SCHEMA: schema } })).code).toBe(0);
        await client.query(`DELETE FROM "${schema}"."migrations" WHERE name = $1`, [last]);
        const { code, report } = await doctor([], { DATABASE_SCHEMA: schema });
        expect(code).toBe(1);
        expect(check(report, 'migrations')).toEqual({ id: 'migrations', status: 'fail', detail: `1 migration(s) not applied: ${last}.`, fix: expect.stringContaining('npx latchkey migrations:run') });
      } finally {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await client.end();
      }
    }
  });

  it('names what DATABASE_URL reaches (PostgreSQL itself hears its own NOTIFY), and warns when DATABASE_POOL_MODE=transaction says otherwise or leaves nothing to listen through', async () => {
    const { report } = await doctor([]);
    if (!process.env.TEST_DATABASE_URL) {
      expect([check(report, 'pooler'), check(report, 'listen')]).toEqual([
        { id: 'pooler', status: 'ok', detail: 'SQLite: no pooler.' },
        { id: 'listen', status: 'ok', detail: 'SQLite: nothing is kept between requests, so nothing listens.' },
      ]);
      return;
    }
    expect(check(report, 'pooler')).toMatchObject({ status: 'ok', detail: expect.stringContaining('keeps a session per connection') });
    expect(check(report, 'listen')).toMatchObject({ status: 'ok', detail: expect.stringContaining('through DATABASE_URL') });
    // The transaction mode refuses DATABASE_SCHEMA (the pooler would drop the search_path): the database's own schema, then.
    const transaction = { DATABASE_POOL_MODE: 'transaction', DATABASE_SCHEMA: undefined as unknown as string };
    const told = (await doctor([], transaction)).report;
    expect(check(told, 'pooler')).toMatchObject({ status: 'warn', fix: expect.stringContaining('Unset DATABASE_POOL_MODE') });
    expect(check(told, 'listen')).toMatchObject({ status: 'warn', fix: expect.stringContaining('DATABASE_LISTEN_URL') });
    const listening = (await doctor([], { ...transaction, DATABASE_LISTEN_URL: process.env.TEST_DATABASE_URL })).report;
    expect(check(listening, 'listen')).toMatchObject({ status: 'ok', detail: expect.stringContaining('through DATABASE_LISTEN_URL') });
  });

  it('refuses DATABASE_SCHEMA with DATABASE_POOL_MODE=transaction, saying what to do instead', async () => {
    const { code, report } = await doctor([], { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test', DATABASE_POOL_MODE: 'transaction', DATABASE_SCHEMA: 'latchkey' });
    expect(code).toBe(1);
    expect(check(report, 'configuration')).toMatchObject({ status: 'fail', detail: expect.stringContaining('DATABASE_SCHEMA: cannot be used with DATABASE_POOL_MODE=transaction') });
  });

  it('fails on a database it cannot reach, and creates no SQLite file', async () => {
    const path = join(tmpdir(), `latchkey-doctor-missing-${randomBytes(4).toString('hex')}.sqlite`);
    const { code, report } = await doctor([], { DATABASE_URL: `sqlite:${path}` });
    expect(code).toBe(1);
    expect(check(report, 'database')).toMatchObject({ status: 'fail', detail: `The SQLite database ${path} does not exist.` });
    expect(check(report, 'migrations')).toMatchObject({ status: 'skip' });
    expect(existsSync(path)).toBe(false);
  });

  it('reports clients allowed legacy grants: implicit as a warning, password as a failure (RFC 9700 §2.1.2, §2.4)', async () => {
    const clients = nest.get(ClientsService);
    const { client: implicit } = await clients.create({ name: 'Old SPA', redirectUris: ['https://old.example.com/cb'], isPublic: true, grantTypes: [GrantType.Implicit] });
    const warned = await doctor([]);
    expect(warned.code).toBe(0);
    expect(check(warned.report, 'legacy_grants')).toEqual({ id: 'legacy_grants', status: 'warn', detail: `Client ${implicit.id} ("Old SPA") is allowed the implicit grant, which RFC 9700 advises against.`, fix: expect.stringContaining('authorization code grant with PKCE') });
    const { client: password } = await clients.create({ name: 'Old CLI', redirectUris: [], grantTypes: [GrantType.Password] });
    const failed = await doctor([]);
    expect(failed.code).toBe(1);
    expect(check(failed.report, 'legacy_grants')).toMatchObject({ status: 'fail', detail: expect.stringContaining(`Client ${password.id} ("Old CLI") is allowed the password grant`) });
    await clients.delete(implicit.id);
    await clients.delete(password.id);
  });
});
