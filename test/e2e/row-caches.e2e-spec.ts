/**
 * Issue 32: on PostgreSQL each instance keeps client rows and live access tokens in memory
 * (src/database/notified-cache.ts), told of every change by the tables' triggers (LISTEN/NOTIFY).
 * What must hold, on two instances of one database, whoever makes the change: a rotated secret, a
 * deleted client or a narrowed grant, a revoked token or a deleted person stops working on every
 * instance in the time a notification takes, never after the cache's 60 s; and with the listening
 * connection lost, nothing stale is served. On SQLite nothing is kept, and the same tests hold
 * trivially: they run there too.
 */
import { jest } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { LISTENER_NAME } from '../../src/database/change-notifications.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { EVERY_ROW } from '../../src/database/notified-cache.js';
import { PreparedStatement } from '../../src/database/prepared-statement.js';
import { TokenStore } from '../../src/tokens/token.store.js';
import { runCli } from '../helpers/cli.js';
import { obtainTokens } from '../helpers/api-client.js';
import { basicAuth, clientCredentialsStatus } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';
import { within } from '../helpers/within.js';
import { startAnotherInstance } from '../helpers/app-at-issuer.js';

const postgres = Boolean(process.env.TEST_DATABASE_URL);


describe('Rows kept per instance on PostgreSQL: every change reaches every instance at once', () => {
  let app: TestApp;
  let second: { nest: NestFastifyApplication; baseUrl: string };
  let instances: string[];

  const newClient = async (): Promise<RegisteredClient> => app.createClient({ scope: 'notes:read', grantTypes: ['client_credentials'] as never });
  /** Each instance answers the client's client_credentials request with `status` (its cache warmed first when 200). */
  const everywhere = async (client: RegisteredClient, status: number): Promise<boolean> =>
    (await Promise.all(instances.map((baseUrl) => clientCredentialsStatus(baseUrl, client)))).every((s) => s === status);

  beforeAll(async () => {
    app = await TestApp.start();
    // A second instance on the same database, as behind a load balancer.
    second = await startAnotherInstance();
    instances = [app.baseUrl, second.baseUrl];
  });
  afterAll(async () => {
    await second?.nest.close();
    await app?.stop();
  });

  it('serves a known client without a lookup on PostgreSQL (each request reads it on SQLite)', async () => {
    const client = await newClient();
    expect(await everywhere(client, 200)).toBe(true);
    const lookups = jest.spyOn(PreparedStatement.prototype, 'one');
    const clientLookups = (): number => lookups.mock.contexts.filter((statement) => (statement as unknown as { name: string }).name === 'latchkey_client_by_id').length;
    try {
      // The client's INSERT notifies too (the trigger fires on every change), and on a busy machine
      // that notification can arrive after the first request kept the row, dropping it once: a
      // lookup more, never a stale row. Wait until a request is served without one.
      if (postgres) {
        expect(
          await within(2_000, async () => {
            lookups.mockClear();
            return (await clientCredentialsStatus(app.baseUrl, client)) === 200 && clientLookups() === 0;
          }),
        ).toBe(true);
      }
      lookups.mockClear();
      for (let i = 0; i < 5; i++) expect(await clientCredentialsStatus(app.baseUrl, client)).toBe(200);
      expect(clientLookups()).toBe(postgres ? 0 : 5);
    } finally {
      lookups.mockRestore();
    }
  });

  it('a secret rotated by the CLI, another process, stops working on both instances and the new one works', async () => {
    const client = await newClient();
    expect(await everywhere(client, 200)).toBe(true);
    const rotated = await runCli(['clients:rotate-secret', '--client-id', client.clientId]);
    expect(rotated.code).toBe(0);
    const secret = (JSON.parse(rotated.stdout) as { client_secret: string }).client_secret;
    expect(await within(1_000, () => everywhere(client, 401))).toBe(true);
    expect(await everywhere({ ...client, clientSecret: secret }, 200)).toBe(true);
  });

  it("a client deleted by an administrator's SQL is refused on both instances", async () => {
    const client = await newClient();
    expect(await everywhere(client, 200)).toBe(true);
    await app.dataSource.query(postgres ? 'DELETE FROM "clients" WHERE "id" = $1' : 'DELETE FROM "clients" WHERE "id" = ?', [client.clientId]);
    expect(await within(1_000, () => everywhere(client, 401))).toBe(true);
  });

  it('a grant type taken away on one instance is refused by the other', async () => {
    const client = await newClient();
    expect(await everywhere(client, 200)).toBe(true);
    const clients = second.nest.get(ClientsService);
    const stored = (await clients.findById(client.clientId))!;
    await clients.update(stored, { name: stored.name, redirectUris: stored.redirectUris, scope: 'notes:read', grantTypes: ['authorization_code'] as never }, { kind: 'administrator', actor: 'test' } as never);
    expect(await within(1_000, () => everywhere(client, 400))).toBe(true);
  });

  it('with the listening connections cut, a change made meanwhile is not hidden by a kept row, neither then nor after listening resumes', async () => {
    const client = await newClient();
    expect(await everywhere(client, 200)).toBe(true);
    if (postgres) {
      const cut = (await app.dataSource.query(`SELECT pg_terminate_backend("pid") AS "cut" FROM "pg_stat_activity" WHERE "application_name" = $1`, [LISTENER_NAME])) as unknown[];
      expect(cut.length).toBeGreaterThanOrEqual(2);
      // The instances hear their connections close (a closed socket, not a silent one: that is the heartbeat's case).
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // Rotated while nobody listens: its notification reaches no instance.
    await app.app.get(ClientsService).rotateSecret(client.clientId);
    expect(await everywhere(client, 401)).toBe(true);
    // Listening resumes within a second; the row kept from before the cut must not come back.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await everywhere(client, 401)).toBe(true);
  });
  describe('access tokens', () => {
    let client: RegisteredClient;
    let person: TestUser;

    /** Each instance answers a read of the person's notes with the token with `status`. */
    const reads = async (token: string, status: number): Promise<boolean> =>
      (
        await Promise.all(
          instances.map(async (baseUrl) => {
            const response = await fetch(`${baseUrl}/api/v1/notes`, { headers: { authorization: `Bearer ${token}` } });
            await response.arrayBuffer();
            return response.status;
          }),
        )
      ).every((s) => s === status);

    beforeAll(async () => {
      client = await app.createClient({ scope: 'notes:read', grantTypes: ['authorization_code', 'refresh_token'] as never });
      person = await app.createUser();
    });

    it('are read without a lookup on PostgreSQL after their first use (each request reads them on SQLite); refresh tokens are always read', async () => {
      const { accessToken } = await obtainTokens(app, client, person, 'notes:read');
      expect(await reads(accessToken, 200)).toBe(true);
      const lookups = jest.spyOn(PreparedStatement.prototype, 'one');
      try {
        for (let i = 0; i < 5; i++) expect(await reads(accessToken, 200)).toBe(true);
        const tokenLookups = lookups.mock.contexts.filter((statement) => (statement as unknown as { name: string }).name === 'latchkey_token_by_hash');
        expect(tokenLookups).toHaveLength(postgres ? 0 : 10);
      } finally {
        lookups.mockRestore();
      }
    });

    it('a token revoked at one instance (RFC 7009) is refused by both, and introspected as inactive by the other', async () => {
      const { accessToken } = await obtainTokens(app, client, person, 'notes:read');
      const introspector = await app.createClient({ scope: 'tokens:introspect', grantTypes: ['client_credentials'] as never });
      const active = async (baseUrl: string): Promise<boolean> => {
        const response = await fetch(`${baseUrl}/introspect`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(introspector.clientId, introspector.clientSecret!) }, body: new URLSearchParams({ token: accessToken }) });
        return ((await response.json()) as { active: boolean }).active;
      };
      expect(await reads(accessToken, 200)).toBe(true);
      expect(await active(second.baseUrl)).toBe(true);
      const revoked = await fetch(app.url('/revoke'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(client.clientId, client.clientSecret!) }, body: new URLSearchParams({ token: accessToken }) });
      expect(revoked.status).toBe(200);
      expect(await within(1_000, () => reads(accessToken, 401))).toBe(true);
      expect(await active(second.baseUrl)).toBe(false);
    });

    it('a token revoked at this instance is refused by this instance on the very next request, before its own notification arrives', async () => {
      const { accessToken } = await obtainTokens(app, client, person, 'notes:read');
      const read = async (): Promise<number> => (await fetch(app.url('/api/v1/notes'), { headers: { authorization: `Bearer ${accessToken}` } })).status;
      expect(await read()).toBe(200);
      // Kept: the next read makes no lookup (on PostgreSQL).
      const lookups = jest.spyOn(PreparedStatement.prototype, 'one');
      try {
        expect(await read()).toBe(200);
        expect(lookups.mock.contexts.filter((statement) => (statement as unknown as { name: string }).name === 'latchkey_token_by_hash')).toHaveLength(postgres ? 0 : 1);
      } finally {
        lookups.mockRestore();
      }
      // Notifications about single tokens are held back on this instance: only what it does itself counts.
      const cache = (app.app.get(TokenStore) as unknown as { cache: { changed(key: string | undefined): void } }).cache;
      const changed = cache.changed.bind(cache);
      const held = jest.spyOn(cache, 'changed').mockImplementation((key) => (key === EVERY_ROW ? changed(key) : undefined));
      try {
        const revoked = await fetch(app.url('/revoke'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(client.clientId, client.clientSecret!) }, body: new URLSearchParams({ token: accessToken }) });
        expect(revoked.status).toBe(200);
        expect(await read()).toBe(401);
      } finally {
        held.mockRestore();
      }
    });

    it('the tokens of a person the CLI deletes, another process, are refused by both instances', async () => {
      const doomed = await app.createUser();
      const { accessToken } = await obtainTokens(app, client, doomed, 'notes:read');
      expect(await reads(accessToken, 200)).toBe(true);
      const deleted = await runCli(['users:delete', '--username', doomed.username]);
      expect(deleted.code).toBe(0);
      expect(await within(1_000, () => reads(accessToken, 401))).toBe(true);
    });

    it('a token revoked by SQL while nobody listens is refused, then and after listening resumes', async () => {
      const { accessToken } = await obtainTokens(app, client, person, 'notes:read');
      expect(await reads(accessToken, 200)).toBe(true);
      if (postgres) {
        await app.dataSource.query(`SELECT pg_terminate_backend("pid") FROM "pg_stat_activity" WHERE "application_name" = $1`, [LISTENER_NAME]);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await app.dataSource.query(postgres ? 'UPDATE "tokens" SET "revoked_at" = now() WHERE "kind" = \'access\' AND "user_id" = (SELECT "id" FROM "users" WHERE "username" = $1)' : 'UPDATE "tokens" SET "revoked_at" = datetime(\'now\') WHERE "kind" = \'access\' AND "user_id" = (SELECT "id" FROM "users" WHERE "username" = ?)', [person.username]);
      expect(await reads(accessToken, 401)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(await reads(accessToken, 401)).toBe(true);
    });
  });
});
