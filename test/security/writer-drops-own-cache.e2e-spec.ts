/**
 * Threat (issue 43, finding 4): on PostgreSQL an instance keeps clients and live access tokens in
 * memory and drops one when the tables' triggers notify it of a change (src/database/notified-cache.ts).
 * The instance that made the change was told the same way: its own notification, on its own
 * listening connection. Until that came back, the instance that had just answered "deleted",
 * "revoked" or "signed out" kept honouring what it had deleted, revoked or ended: a deleted client
 * still authenticated (500: only the tokens' foreign key stopped the INSERT), a grant type the client
 * had just given up still got a token, a deleted client's person token still read the data API. And
 * sign-out dropped the kept tokens before its commit, so a read in between kept them again.
 * Defence: the store that writes a kept row says so through the manager it writes with
 * (ChangeNotifications.committing), and this instance drops the row as soon as that write commits,
 * on every path, without waiting for its notification.
 * The test: this instance's listening connection goes through a relay that holds PostgreSQL's
 * answers back 400 ms (inside the 5 s heartbeat, so the instance still trusts its caches); each
 * path's change is made while requests race it, and the very next request must see it. The cases
 * are the list of write paths (one table, below). SQLite keeps nothing: the same must hold there.
 */
import { jest } from '@jest/globals';
import type { AppCommand } from '../../src/cli/command.js';
import { COMMANDS } from '../../src/cli/commands.js';
import { ChangeNotifications } from '../../src/database/change-notifications.js';
import { PreparedStatement } from '../../src/database/prepared-statement.js';
import { Browser } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { authorizeAsUser, authorizeUrl, basicAuth, newPkce, redirectParams, tokenRequest } from '../helpers/oauth-flow.js';
import { SlowRelay } from '../helpers/slow-relay.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';
import { within } from '../helpers/within.js';

const postgres = Boolean(process.env.TEST_DATABASE_URL);
/** How long this instance's own notifications take to come back. */
const NOTIFICATION_DELAY_MS = 400;
const CLIENT_LOOKUP = 'latchkey_client_by_id';
const TOKEN_LOOKUP = 'latchkey_token_by_hash';
const REDIRECT_URI = 'http://localhost:8080/callback';

/** A client registered at /register, with what RFC 7592 gives it to manage itself. */
interface Registered extends RegisteredClient {
  clientSecret: string;
  registrationAccessToken: string;
  metadata: Record<string, unknown>;
}

/** What a case sets up, changes and then checks on the very next request. */
interface World {
  client: Registered;
  person: TestUser;
  /** The browser the person signed in with, and got `token` through. */
  browser: Browser;
  /** The person's access token (authorization code flow, through `client`; OpenID, so that it belongs to the session). */
  token: string;
}

describe('the instance that commits a change has it in force on the very next request, before its own notification comes back', () => {
  let relay: SlowRelay | undefined;
  let app: TestApp;
  let adminToken: string;

  beforeAll(async () => {
    if (postgres) relay = await SlowRelay.start(process.env.TEST_DATABASE_URL!, NOTIFICATION_DELAY_MS);
    app = await TestApp.start({ RATE_LIMIT_CLIENT_PER_MINUTE: '0', RATE_LIMIT_API_PER_MINUTE: '0', ...(relay ? { DATABASE_LISTEN_URL: relay.url } : {}) });
    // Rows are kept only once the heartbeat comes back (through the relay, 400 ms late).
    if (postgres) expect(await within(5_000, async () => app.app.get(ChangeNotifications).hearing)).toBe(true);
    const admin = await app.createClient({ name: 'admin', redirectUris: [], grantTypes: ['client_credentials'] as never, scope: 'clients:register' });
    const issued = await tokenRequest(app, admin, { grant_type: 'client_credentials' });
    adminToken = issued.body.access_token as string;
  });
  afterAll(async () => {
    await app?.stop();
    await relay?.close();
    delete process.env.DATABASE_LISTEN_URL;
  });
  afterEach(() => jest.restoreAllMocks());

  /** RFC 7591: a client that may use client_credentials and the code flow, registered by an administrator's token. */
  async function register(): Promise<Registered> {
    const metadata = { client_name: 'Cached', redirect_uris: [REDIRECT_URI], grant_types: ['authorization_code', 'refresh_token', 'client_credentials'], scope: 'openid offline_access notes:read' };
    const reply = await fetch(app.url('/register'), { method: 'POST', headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify(metadata) });
    expect(reply.status).toBe(201);
    const body = (await reply.json()) as Record<string, string>;
    return { clientId: body.client_id, clientSecret: body.client_secret, redirectUri: REDIRECT_URI, registrationAccessToken: body.registration_access_token, metadata: { ...metadata, client_id: body.client_id } };
  }

  /** The person signs in with `browser` and gets an access token for `client` (a code, then /token). */
  async function personToken(client: RegisteredClient, person: TestUser, browser: Browser, scope = 'openid notes:read'): Promise<string> {
    const pkce = newPkce();
    const page = await authorizeAsUser(browser, person, authorizeUrl(client, { scope, code_challenge: pkce.challenge, code_challenge_method: 'S256' }));
    const code = redirectParams(page).get('code')!;
    const issued = await tokenRequest(app, client, { grant_type: 'authorization_code', code, code_verifier: pkce.verifier, redirect_uri: client.redirectUri });
    expect(issued.status).toBe(200);
    return issued.body.access_token as string;
  }

  /** A client_credentials request: the client authenticated from its (kept) row, a token issued. */
  const clientCredentials = async (client: RegisteredClient): Promise<number> => (await tokenRequest(app, client, { grant_type: 'client_credentials', scope: 'notes:read' })).status;
  /** A data API read with the token: the token found by its (kept) row. */
  const apiRead = async (token: string): Promise<number> => {
    const response = await fetch(app.url('/api/v1/notes'), { headers: { authorization: `Bearer ${token}` } });
    await response.arrayBuffer();
    return response.status;
  };
  /** A /revoke of no token: the client authenticated from its (kept) row and nothing written (RFC 7009 §2.2: 200). */
  const clientRead = async (client: RegisteredClient): Promise<number> => {
    const response = await fetch(app.url('/revoke'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(client.clientId, client.clientSecret!) }, body: 'token=none' });
    await response.arrayBuffer();
    return response.status;
  };

  /**
   * The fixtures' own notifications (a client's INSERT) come back 400 ms late and would drop a kept
   * row in the middle of a case, hiding what the case looks for: let them arrive first.
   */
  const quiet = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, postgres ? 2 * NOTIFICATION_DELAY_MS : 0));

  /** `request` answers 200, and (PostgreSQL) a second time without reading `statement`'s row: this instance keeps it. */
  async function kept(statement: string, request: () => Promise<number>): Promise<void> {
    expect(await request()).toBe(200);
    const lookups = jest.spyOn(PreparedStatement.prototype, 'one');
    expect(await request()).toBe(200);
    const reads = lookups.mock.contexts.filter((prepared) => (prepared as unknown as { name: string }).name === statement).length;
    lookups.mockRestore();
    expect(reads).toBe(postgres ? 0 : 1);
  }

  /** Runs `change` while `reads` run over and over, three of each at a time (one may straddle its commit), and returns its result. */
  async function racing<T>(reads: (() => Promise<number>)[], change: () => Promise<T>): Promise<T> {
    let done = false;
    const loops = [...reads, ...reads, ...reads].map(async (read) => {
      while (!done) await read();
    });
    try {
      return await change();
    } finally {
      done = true;
      await Promise.all(loops);
    }
  }

  /** An admin CLI command run in this process, on this instance's services: the CLI's own code path, with this instance as the writer. */
  const cli = (name: string, flags: Record<string, string>): Promise<unknown> => (COMMANDS[name] as AppCommand).run(app.app, flags);

  async function world(options: { scope?: string } = {}): Promise<World> {
    const client = await register();
    const person = await app.createUser();
    const browser = new Browser(app.baseUrl);
    const token = await personToken(client, person, browser, options.scope);
    return { client, person, browser, token };
  }

  const registration = (w: World, method: 'PUT' | 'DELETE', body?: unknown): Promise<Response> =>
    fetch(app.url(`/register/${w.client.clientId}`), {
      method,
      headers: { authorization: `Bearer ${w.client.registrationAccessToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  describe('changes of a client: its row, and the tokens that go with it', () => {
    it.each<[string, (w: World) => Promise<void>, { clientCredentials: number; token: number }]>([
      [
        'RFC 7592 §2.2 PUT by the client itself, giving up client_credentials',
        async (w) => expect((await registration(w, 'PUT', { ...w.client.metadata, grant_types: ['authorization_code', 'refresh_token'] })).status).toBe(200),
        { clientCredentials: 400, token: 200 },
      ],
      ['RFC 7592 §2.3 DELETE by the client itself', async (w) => expect((await registration(w, 'DELETE')).status).toBe(204), { clientCredentials: 401, token: 401 }],
      ['clients:rotate-secret (admin CLI)', async (w) => void (await cli('clients:rotate-secret', { 'client-id': w.client.clientId })), { clientCredentials: 401, token: 200 }],
      ['clients:delete (admin CLI)', async (w) => void (await cli('clients:delete', { 'client-id': w.client.clientId })), { clientCredentials: 401, token: 401 }],
    ])('%s', async (_path, change, next) => {
      const w = await world();
      await quiet();
      await kept(CLIENT_LOOKUP, () => clientRead(w.client));
      await kept(TOKEN_LOOKUP, () => apiRead(w.token));
      await racing([() => clientRead(w.client), () => apiRead(w.token)], () => change(w));
      expect({ clientCredentials: await clientCredentials(w.client), token: await apiRead(w.token) }).toEqual(next);
    });
  });

  describe("changes of a person's tokens", () => {
    const endOthers = async (w: World): Promise<void> => {
      const done = await w.browser.submit(await w.browser.get('/account'), '/account/sessions/end-others');
      expect(done.status).toBe(303);
    };

    it.each<[string, (w: World) => Promise<void>]>([
      [
        'RFC 7009 §2.1 revocation by the client',
        async (w) => {
          const reply = await fetch(app.url('/revoke'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(w.client.clientId, w.client.clientSecret) }, body: new URLSearchParams({ token: w.token }) });
          expect(reply.status).toBe(200);
        },
      ],
      [
        'withdrawing access on the account page',
        async (w) => {
          const page = await w.browser.get('/account');
          const done = await w.browser.submit(page, '/account/access/withdraw', { client_id: w.client.clientId });
          expect(done.status).toBe(303);
        },
      ],
      ['signing out (Back-Channel Logout 1.0 §2.7: the grants made in the session end with it)', async (w) => expect((await w.browser.submit(await w.browser.get('/account'), '/logout')).status).toBe(303)],
      [
        '"sign out everywhere else" on the account page, from another browser',
        async (w) => {
          const other = new Browser(app.baseUrl);
          expect((await other.submit(await other.get('/login'), '/login', { username: w.person.username, password: w.person.password })).status).toBe(303);
          await endOthers({ ...w, browser: other });
        },
      ],
      ['users:sign-out (admin CLI)', async (w) => void (await cli('users:sign-out', { username: w.person.username }))],
      ['users:set-password (admin CLI), which ends every session', async (w) => void (await cli('users:set-password', { username: w.person.username, password: 'a brand new passphrase' }))],
    ])('%s', async (_path, change) => {
      const w = await world();
      await quiet();
      await kept(TOKEN_LOOKUP, () => apiRead(w.token));
      await racing([() => apiRead(w.token)], () => change(w));
      expect(await apiRead(w.token)).toBe(401);
    });

    it('users:delete (admin CLI) of a person who signed out long ago: the token that outlived the session (offline_access) goes with them', async () => {
      const w = await world({ scope: 'openid offline_access notes:read' });
      expect((await w.browser.submit(await w.browser.get('/account'), '/logout')).status).toBe(303);
      await quiet();
      await kept(TOKEN_LOOKUP, () => apiRead(w.token));
      await racing([() => apiRead(w.token)], () => cli('users:delete', { username: w.person.username }));
      expect(await apiRead(w.token)).toBe(401);
    });
  });

  describe('what another writer changes reaches this instance with its notification', () => {
    it('the control: an administrator\'s SQL, which no store of this instance made, is seen here only once its notification arrives (400 ms late on PostgreSQL)', async () => {
      const w = await world();
      await quiet();
      await kept(CLIENT_LOOKUP, () => clientRead(w.client));
      const sql = postgres ? 'UPDATE "clients" SET "grant_types" = $1 WHERE "id" = $2' : 'UPDATE "clients" SET "grant_types" = ? WHERE "id" = ?';
      await app.dataSource.query(sql, [JSON.stringify(['authorization_code', 'refresh_token']), w.client.clientId]);
      // The relay holds the notification back: on PostgreSQL the kept row still answers (this is what the test slows).
      expect(await clientCredentials(w.client)).toBe(postgres ? 200 : 400);
      expect(await within(3 * NOTIFICATION_DELAY_MS, async () => (await clientCredentials(w.client)) === 400)).toBe(true);
    });

    it('the CLI in a process of its own is the instance that made the change: this one drops the row when the notification arrives', async () => {
      const w = await world();
      await quiet();
      await kept(CLIENT_LOOKUP, () => clientRead(w.client));
      const deleted = await runCli(['clients:delete', '--client-id', w.client.clientId]);
      expect(deleted).toMatchObject({ code: 0 });
      expect(await within(3 * NOTIFICATION_DELAY_MS, async () => (await clientCredentials(w.client)) === 401 && (await apiRead(w.token)) === 401)).toBe(true);
    });
  });
});
