import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '../../src/clients/client.entity.js';
import { MIGRATIONS } from '../../src/schema/migrations/index.js';
import { User } from '../../src/users/user.entity.js';
import { UsersService } from '../../src/users/users.service.js';
import { Browser } from '../helpers/browser.js';
import { runCli as cli, type CliResult } from '../helpers/cli.js';
import { obtainCode, tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient } from '../helpers/test-app.js';
import { createTestDatabase } from '../helpers/test-database.js';

/**
 * The admin CLI (issue #2, "CLI"): `npx latchkey <command>`, that is scripts/latchkey.mjs, run as
 * a separate process on this file's database while the server runs on the same database. The bin
 * entry itself (building dist/ when the sources changed) is test/integration/cli-bin-entry.spec.ts.
 */

const RFC7591_FIELDS = ['client_id', 'client_name', 'redirect_uris', 'scope', 'grant_types', 'token_endpoint_auth_method', 'client_id_issued_at'];

/** A successful run: exit 0, nothing on stderr, exactly one JSON document on stdout. */
async function cliJson<T = Record<string, unknown>>(args: string[], options: { input?: string; env?: Record<string, string> } = {}): Promise<T> {
  const result = await cli(args, options);
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(result.stdout) as T;
}

function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

describe('admin CLI', () => {
  let app: TestApp;
  let migrationsRun: CliResult;

  beforeAll(async () => {
    await createTestDatabase();
    // The operator's path for PostgreSQL: migrations run by the CLI, not by the server's start-up.
    migrationsRun = await cli(['migrations:run'], { env: { MIGRATIONS_RUN: 'false' } });
    app = await TestApp.start();
  }, 180_000);
  afterAll(async () => app?.stop());

  const countRows = async (): Promise<{ users: number; clients: number }> => ({
    users: await app.dataSource.getRepository(User).count(),
    clients: await app.dataSource.getRepository(Client).count(),
  });

  const rawClientRow = (clientId: string): Promise<Record<string, unknown>> =>
    app.dataSource.createQueryBuilder().select('*').from('clients', 'c').where('c.id = :id', { id: clientId }).getRawOne() as Promise<Record<string, unknown>>;

  describe('migrations:run', () => {
    it('applies every migration to a fresh database and prints their names', () => {
      expect(migrationsRun.stderr).toBe('');
      expect(migrationsRun.code).toBe(0);
      expect(JSON.parse(migrationsRun.stdout)).toEqual({ applied: MIGRATIONS.map((migration) => new migration().name) });
    });

    it('applies nothing the second time', async () => {
      expect(await cliJson(['migrations:run'], { env: { MIGRATIONS_RUN: 'false' } })).toEqual({ applied: [] });
    });

    it('reports what it applied even where start-up would apply migrations (MIGRATIONS_RUN=true, the SQLite default)', async () => {
      const file = join(tmpdir(), `latchkey-cli-migrations-${process.pid}.sqlite`);
      try {
        const result = await cliJson(['migrations:run'], { env: { DATABASE_URL: `sqlite:${file}`, MIGRATIONS_RUN: 'true' } });
        expect(result).toEqual({ applied: MIGRATIONS.map((migration) => new migration().name) });
      } finally {
        for (const suffix of ['', '-wal', '-shm']) await rm(file + suffix, { force: true });
      }
    });
  });

  describe('users', () => {
    it('users:create prints one JSON object, stores an argon2id hash, and the user can log in to the running server', async () => {
      const password = 'correct horse battery staple';
      const user = await cliJson(['users:create', '--username', 'alice', '--password', password]);
      expect(user).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        username: 'alice',
        email: null,
        email_verified: false,
        name: null,
        given_name: null,
        family_name: null,
        require_mfa: false,
        has_password: true,
        active: true,
        created_at: expect.any(String),
      });
      expect(Math.abs(Date.parse(user.created_at as string) - Date.now())).toBeLessThan(5 * 60_000);

      const row = (await app.dataSource.createQueryBuilder().select('*').from('users', 'u').where('u.username = :name', { name: 'alice' }).getRawOne()) as Record<string, unknown>;
      expect(row.id).toBe(user.id);
      expect(row.password_hash).toMatch(/^\$argon2id\$/);
      expect(JSON.stringify(row)).not.toContain(password);

      const client = await app.createClient({ scope: 'notes:read' });
      const { code, pkce } = await obtainCode(app, client, { username: 'alice', password });
      const tokens = await tokenRequest(app, client, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier });
      expect(tokens.status).toBe(200);
    });

    it('users:create --password-stdin reads the password from the first line of stdin', async () => {
      await cliJson(['users:create', '--username', 'stdin-user', '--password-stdin'], { input: 'a password from stdin\n' });
      const users = app.app.get(UsersService);
      expect(await users.authenticate('stdin-user', 'a password from stdin')).not.toBeNull();
      expect(await users.authenticate('stdin-user', 'a password from stdin\n')).toBeNull();
    });

    it('takes flag values that start with "-" (util.parseArgs alone refuses `--password -x` as ambiguous)', async () => {
      // (A username may not start with '-'; a client id with one is in the bad-input cases below.)
      const user = await cliJson(['users:create', '--username', 'dash-user', '--password', '--a password with dashes']);
      expect(user).toMatchObject({ username: 'dash-user' });
      expect(await app.app.get(UsersService).authenticate('dash-user', '--a password with dashes')).not.toBeNull();
    });

    it('users:list lists every user without password hashes', async () => {
      await app.createUser('listed-user');
      const list = await cliJson<Record<string, unknown>[]>(['users:list']);
      expect(list.map((u) => u.username)).toEqual(expect.arrayContaining(['alice', 'listed-user']));
      for (const user of list) expect(Object.keys(user).sort()).toEqual(['active', 'created_at', 'email', 'email_verified', 'family_name', 'given_name', 'has_password', 'id', 'name', 'require_mfa', 'username']);
      expect(JSON.stringify(list)).not.toContain('argon2');
    });

    it('users:create takes the profile attributes OpenID Connect releases (Core §5.1); an address is unverified unless said', async () => {
      const user = await cliJson(['users:create', '--username', 'carol', '--password', 'correct horse battery staple', '--email', 'carol@example.com', '--name', 'Carol Danvers', '--given-name', 'Carol', '--family-name', 'Danvers']);
      expect(user).toMatchObject({ username: 'carol', email: 'carol@example.com', email_verified: false, name: 'Carol Danvers', given_name: 'Carol', family_name: 'Danvers' });
    });

    it('users:update changes the profile: a verified address stays verified until it changes, an empty value clears', async () => {
      await app.createUser('dave');
      expect(await cliJson(['users:update', '--username', 'dave', '--email', 'dave@example.com', '--email-verified'])).toMatchObject({ email: 'dave@example.com', email_verified: true });
      expect(await cliJson(['users:update', '--username', 'dave', '--name', 'Dave Lister'])).toMatchObject({ email: 'dave@example.com', email_verified: true, name: 'Dave Lister' });
      expect(await cliJson(['users:update', '--username', 'dave', '--email', 'lister@example.com'])).toMatchObject({ email: 'lister@example.com', email_verified: false });
      expect(await cliJson(['users:update', '--username', 'dave', '--email', ''])).toMatchObject({ email: null, email_verified: false, name: 'Dave Lister' });
      const row = (await app.dataSource.createQueryBuilder().select('*').from('users', 'u').where('u.username = :name', { name: 'dave' }).getRawOne()) as Record<string, unknown>;
      expect([row.email, row.name]).toEqual([null, 'Dave Lister']);
    });

    it.each([
      [['--email', 'not an address'], /email must be an email address/],
      [['--name', 'x'.repeat(201)], /name must be 1 to 200 characters/],
      [['--given-name', 'line\nbreak'], /givenName must be 1 to 100 characters without control characters/],
      [['--email-verified', '--email-unverified'], /contradict/],
    ])('users:update refuses %j with a clear message and changes nothing', async (flags, message) => {
      const username = `erin-${flags.length}-${String(message).length}`;
      await app.createUser(username);
      const before = (await app.dataSource.createQueryBuilder().select('*').from('users', 'u').where('u.username = :name', { name: username }).getRawOne()) as Record<string, unknown>;
      const result = await cli(['users:update', '--username', username, ...(flags as string[])]);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(message as RegExp);
      const after = (await app.dataSource.createQueryBuilder().select('*').from('users', 'u').where('u.username = :name', { name: username }).getRawOne()) as Record<string, unknown>;
      expect(after).toEqual(before);
    });

    it('users:set-password --password-stdin replaces the password: the old one stops working', async () => {
      const user = await app.createUser('changing-user', 'the old password');
      const view = await cliJson(['users:set-password', '--username', user.username, '--password-stdin'], { input: 'the new password\n' });
      expect(view).toMatchObject({ username: user.username });
      const users = app.app.get(UsersService);
      expect(await users.authenticate(user.username, 'the new password')).not.toBeNull();
      expect(await users.authenticate(user.username, 'the old password')).toBeNull();
    });

    it('users:delete deletes the user', async () => {
      await app.createUser('leaving-user');
      expect(await cliJson(['users:delete', '--username', 'leaving-user'])).toEqual({ deleted: true, username: 'leaving-user' });
      expect(await app.dataSource.getRepository(User).existsBy({ username: 'leaving-user' })).toBe(false);
    });
  });

  describe('clients', () => {
    it('clients:create --public --grant-type urn:ietf:params:oauth:grant-type:device_code: a device client without redirect URIs (RFC 8628), which gets device codes', async () => {
      const view = await cliJson(['clients:create', '--name', 'Set-top box', '--public', '--grant-type', 'urn:ietf:params:oauth:grant-type:device_code', '--scope', 'notes:read']);
      expect(view).toMatchObject({ grant_types: ['urn:ietf:params:oauth:grant-type:device_code'], token_endpoint_auth_method: 'none', redirect_uris: [] });
      const started = await fetch(app.url('/device_authorization'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ client_id: view.client_id as string }).toString() });
      expect(started.status).toBe(200);
    });

    it('clients:create --auth-method client_secret_post and descriptive URLs: stored, shown, and the registered method enforced at /token', async () => {
      const view = await cliJson([
        'clients:create', '--name', 'Poster', '--grant-type', 'client_credentials', '--scope', 'notes:read', '--auth-method', 'client_secret_post',
        '--client-uri', 'https://poster.example/', '--policy-uri', 'https://poster.example/privacy', '--tos-uri', 'https://poster.example/terms', '--logo-uri', 'https://poster.example/logo.png',
      ]);
      expect(view).toMatchObject({
        token_endpoint_auth_method: 'client_secret_post',
        client_uri: 'https://poster.example/', policy_uri: 'https://poster.example/privacy', tos_uri: 'https://poster.example/terms', logo_uri: 'https://poster.example/logo.png',
      });
      const client: RegisteredClient = { clientId: view.client_id as string, clientSecret: view.client_secret as string, redirectUri: '' };
      // Basic is not what this client registered: 401 invalid_client (issue 15, item 2).
      const viaBasic = await tokenRequest(app, client, { grant_type: 'client_credentials' });
      expect({ status: viaBasic.status, error: viaBasic.body.error }).toEqual({ status: 401, error: 'invalid_client' });
      const viaPost = await tokenRequest(app, { ...client, tokenEndpointAuthMethod: 'client_secret_post' }, { grant_type: 'client_credentials' });
      expect(viaPost.status).toBe(200);
    });

    it('clients:create --require-par: shown, and the client\'s plain authorization requests are refused (RFC 9126 §5)', async () => {
      const view = await cliJson(['clients:create', '--name', 'Pusher', '--redirect-uri', 'http://localhost:9000/cb', '--scope', 'notes:read', '--require-par']);
      expect(view.require_pushed_authorization_requests).toBe(true);
      const plain = await new Browser(app.baseUrl).get(`/authorize?${new URLSearchParams({ response_type: 'code', client_id: view.client_id as string, redirect_uri: 'http://localhost:9000/cb', scope: 'notes:read' })}`);
      expect(plain.status).toBe(302);
      expect(new URL(plain.location!).searchParams.get('error')).toBe('invalid_request');
    });

    it('clients:create (confidential) prints the RFC 7591 fields once; only a SHA-256 hash of the secret is stored', async () => {
      const before = Math.floor(Date.now() / 1000);
      const view = await cliJson([
        'clients:create',
        '--name',
        'Demo',
        '--redirect-uri',
        'https://client.example.com/cb',
        '--redirect-uri',
        'http://127.0.0.1:8080/cb',
        '--scope',
        'notes:write notes:read',
      ]);
      const after = Math.ceil(Date.now() / 1000);
      expect(view).toEqual({
        client_id: expect.stringMatching(/^[A-Za-z0-9_-]{16,64}$/),
        client_secret: expect.stringMatching(/^lk_cs_[A-Za-z0-9_-]{43}$/),
        client_secret_expires_at: 0,
        client_name: 'Demo',
        redirect_uris: ['https://client.example.com/cb', 'http://127.0.0.1:8080/cb'],
        scope: 'notes:read notes:write',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
        access_token_type: 'bearer',
        client_id_issued_at: expect.any(Number),
        // RFC 7591 §3.2.1: what the server provisioned is read back too, OpenID defaults included.
        id_token_signed_response_alg: 'RS256',
        subject_type: 'public',
        require_pushed_authorization_requests: false,
        dpop_bound_access_tokens: false,
        security_profile: 'default',
      });
      expect(Object.keys(view)).toEqual(expect.arrayContaining(RFC7591_FIELDS));
      expect(Number.isInteger(view.client_id_issued_at)).toBe(true);
      expect(view.client_id_issued_at).toBeGreaterThanOrEqual(before - 5);
      expect(view.client_id_issued_at).toBeLessThanOrEqual(after + 5);

      const secret = view.client_secret as string;
      const row = await rawClientRow(view.client_id as string);
      expect(row.secret_hash).toBe(sha256Hex(secret));
      expect(JSON.stringify(row)).not.toContain(secret);
      expect(JSON.stringify(row)).not.toContain(secret.slice('lk_cs_'.length));
    });

    it('a client and a user created with the CLI complete the flow on the running server', async () => {
      const view = await cliJson(['clients:create', '--name', 'Flow', '--redirect-uri', 'http://localhost:9000/cb', '--scope', 'notes:read']);
      await cliJson(['users:create', '--username', 'flow-user', '--password', 'flow user password']);
      const client: RegisteredClient = { clientId: view.client_id as string, clientSecret: view.client_secret as string, redirectUri: 'http://localhost:9000/cb' };
      const { code, pkce } = await obtainCode(app, client, { username: 'flow-user', password: 'flow user password' });
      const tokens = await tokenRequest(app, client, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier });
      expect(tokens.status).toBe(200);
      expect(tokens.body.scope).toBe('notes:read');
    });

    it('clients:create --public registers a client without a secret, authenticating with "none"', async () => {
      const view = await cliJson(['clients:create', '--name', 'Native app', '--redirect-uri', 'com.example.app:/oauth2redirect', '--public']);
      expect(view).toEqual({
        client_id: expect.any(String),
        client_name: 'Native app',
        redirect_uris: ['com.example.app:/oauth2redirect'],
        scope: '',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        access_token_type: 'bearer',
        client_id_issued_at: expect.any(Number),
        // RFC 7591 §3.2.1: what the server provisioned is read back too, OpenID defaults included.
        id_token_signed_response_alg: 'RS256',
        subject_type: 'public',
        require_pushed_authorization_requests: false,
        dpop_bound_access_tokens: false,
        security_profile: 'default',
      });
      expect((await rawClientRow(view.client_id as string)).secret_hash).toBeNull();
    });

    it('clients:list lists every client, and never shows a secret again', async () => {
      const registered = await app.createClient({ name: 'Listed client' });
      const list = await cliJson<Record<string, unknown>[]>(['clients:list']);
      const listed = list.find((c) => c.client_id === registered.clientId);
      expect(listed).toMatchObject({ client_name: 'Listed client', redirect_uris: [registered.redirectUri], token_endpoint_auth_method: 'client_secret_basic' });
      for (const client of list) {
        expect(client).not.toHaveProperty('client_secret');
        expect(client).not.toHaveProperty('secret_hash');
      }
      expect(JSON.stringify(list)).not.toContain(registered.clientSecret!);
    });

    it('clients:rotate-secret issues a new secret that works at /token, and the old one stops working at once', async () => {
      const client = await app.createClient({ scope: 'notes:read' });
      const user = await app.createUser();
      const { code, pkce } = await obtainCode(app, client, user);

      const view = await cliJson(['clients:rotate-secret', '--client-id', client.clientId]);
      const newSecret = view.client_secret as string;
      expect(newSecret).toMatch(/^lk_cs_[A-Za-z0-9_-]{43}$/);
      expect(newSecret).not.toBe(client.clientSecret);
      expect(view).toMatchObject({ client_id: client.clientId, client_secret_expires_at: 0 });
      expect((await rawClientRow(client.clientId)).secret_hash).toBe(sha256Hex(newSecret));

      const params = { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier };
      const withOld = await tokenRequest(app, client, params);
      expect(withOld.status).toBe(401);
      expect(withOld.body.error).toBe('invalid_client');
      const withNew = await tokenRequest(app, { ...client, clientSecret: newSecret }, params);
      expect(withNew.status).toBe(200);
      expect(withNew.body.access_token).toMatch(/^lk_at_/);
    });

    it('clients:delete deletes the client: the server no longer knows it', async () => {
      const client = await app.createClient();
      expect(await cliJson(['clients:delete', '--client-id', client.clientId])).toEqual({ deleted: true, client_id: client.clientId });
      expect(await app.dataSource.getRepository(Client).existsBy({ id: client.clientId })).toBe(false);
      const page = await new Browser(app.baseUrl).get(`/authorize?response_type=code&client_id=${encodeURIComponent(client.clientId)}&redirect_uri=${encodeURIComponent(client.redirectUri)}`);
      expect(page.status).toBe(400);
      expect(page.location).toBeUndefined();
    });

    it('audit:list prints the audit trail newest first: who registered, rotated and deleted which client', async () => {
      const view = await cliJson(['clients:create', '--name', 'Audited', '--grant-type', 'client_credentials', '--scope', 'tokens:introspect']);
      await cliJson(['clients:rotate-secret', '--client-id', view.client_id as string]);
      await cliJson(['clients:delete', '--client-id', view.client_id as string]);
      const events = await cliJson<{ at: string; actor: string; action: string; subject: string }[]>(['audit:list', '--limit', '3']);
      expect(events.map((e) => [e.actor, e.action, e.subject])).toEqual([
        ['cli', 'client.deleted', `client:${view.client_id as string}`],
        ['cli', 'client.secret_rotated', `client:${view.client_id as string}`],
        ['cli', 'client.registered', `client:${view.client_id as string}`],
      ]);
      expect(JSON.stringify(events)).not.toContain(view.client_secret as string);
    });

    it('resources:register --introspector names the client a resource server introspects with (RFC 7662 §2.2); resources:list shows it', async () => {
      const client = await cliJson(['clients:create', '--name', 'Reports API', '--grant-type', 'client_credentials', '--scope', 'tokens:introspect']);
      const uri = `https://reports-${Date.now().toString(36)}.example.com/api`;
      const registered = await cliJson(['resources:register', '--uri', uri, '--name', 'Reports', '--introspector', client.client_id as string]);
      expect(registered).toEqual({ id: expect.any(String), uri, name: 'Reports', access_token_format: 'opaque', introspector: client.client_id, created_at: expect.any(String) });
      const listed = await cliJson<Record<string, unknown>[]>(['resources:list']);
      expect(listed.find((server) => server.uri === uri)).toEqual(registered);
    });
  });

  describe('bad input: non-zero exit, a clear message on stderr, nothing on stdout, nothing written', () => {
    const cases: [string, string[], RegExp][] = [
      ['clients:create without --name', ['clients:create', '--redirect-uri', 'https://client.example.com/cb'], /--name/],
      ['clients:create without a redirect URI', ['clients:create', '--name', 'No URI'], /redirect URI/i],
      ['clients:create with http on a public host', ['clients:create', '--name', 'Bad', '--redirect-uri', 'http://client.example.com/cb'], /http:\/\/client\.example\.com\/cb/],
      ['clients:create with one good URI and one with a fragment', ['clients:create', '--name', 'Bad', '--redirect-uri', 'https://ok.example/cb', '--redirect-uri', 'https://ok.example/cb#x'], /fragment/],
      ['clients:create with a javascript: URI', ['clients:create', '--name', 'Bad', '--redirect-uri', 'javascript:alert(1)'], /javascript/],
      ['clients:create with a CR LF inside a redirect URI', ['clients:create', '--name', 'Bad', '--redirect-uri', 'https://ok.example/cb\r\nSet-Cookie: a=b'], /control character|whitespace/],
      ['clients:create with a tab in a redirect URI', ['clients:create', '--name', 'Bad', '--redirect-uri', 'https://ok.example/\tcb'], /control character|whitespace/],
      ['clients:create with a space in a redirect URI', ['clients:create', '--name', 'Bad', '--redirect-uri', 'https://ok.example/c b'], /control character|whitespace/],
      ['clients:create with an empty host (https:///cb)', ['clients:create', '--name', 'Bad', '--redirect-uri', 'https:///cb'], /host/],
      ['clients:create with an unknown --auth-method', ['clients:create', '--name', 'Bad', '--redirect-uri', 'https://ok.example/cb', '--auth-method', 'client_secret_jwt'], /--auth-method client_secret_jwt/],
      ['clients:create --auth-method private_key_jwt without keys', ['clients:create', '--name', 'Bad', '--redirect-uri', 'https://ok.example/cb', '--auth-method', 'private_key_jwt'], /exactly one of jwks and jwks_uri/],
      ['clients:create with --jwks that is not JSON', ['clients:create', '--name', 'Bad', '--redirect-uri', 'https://ok.example/cb', '--auth-method', 'private_key_jwt', '--jwks', '{keys'], /--jwks must be a JWK Set/],
      ['resources:register with a relative URI', ['resources:register', '--uri', '/api'], /not an absolute URI/],
      ['resources:register with an unknown --introspector', ['resources:register', '--uri', 'https://refused.example.com/', '--introspector', 'no-such-client'], /No client with the id "no-such-client"/],
      ['clients:create with a plain-http --policy-uri', ['clients:create', '--name', 'Bad', '--redirect-uri', 'https://ok.example/cb', '--policy-uri', 'http://ok.example/privacy'], /policy_uri.*https/],
      ['clients:create with an unknown scope', ['clients:create', '--name', 'Bad', '--redirect-uri', 'https://ok.example/cb', '--scope', 'notes:read bogus:scope'], /bogus:scope/],
      ['clients:create with an unsupported grant type', ['clients:create', '--name', 'Bad', '--redirect-uri', 'https://ok.example/cb', '--grant-type', 'device_code'], /device_code/],
      ['users:create with a taken username', ['users:create', '--username', 'taken-user', '--password', 'another password'], /already exists/],
      ['users:create without --username', ['users:create', '--password', 'some password'], /--username/],
      ['users:create with a too-short password', ['users:create', '--username', 'short-pw', '--password', 'short'], /[Pp]assword/],
      ['users:delete of an unknown user', ['users:delete', '--username', 'nobody-here'], /nobody-here/],
      ['clients:delete of an unknown client', ['clients:delete', '--client-id', 'no-such-client'], /no-such-client/],
      ['clients:delete of an unknown client whose id starts with "-"', ['clients:delete', '--client-id', '-abc'], /No client with id "-abc"/],
      ['a string flag without its value', ['users:delete', '--username'], /--username/],
      ['clients:rotate-secret of an unknown client', ['clients:rotate-secret', '--client-id', 'no-such-client'], /no-such-client/],
      ['clients:rotate-secret of a public client', ['clients:rotate-secret', '--client-id', '<public>'], /public/],
      ['an unknown command', ['users:frobnicate'], /unknown command/],
      ['an unknown flag', ['users:list', '--all'], /--all/],
      ['a stray positional argument', ['users:list', 'everyone'], /everyone/],
      ['no command at all', [], /Usage/],
    ];
    const results = new Map<string, CliResult>();
    let rowsBefore: { users: number; clients: number };
    let rowsAfter: { users: number; clients: number };
    let publicSecretHash: unknown;

    beforeAll(async () => {
      await app.createUser('taken-user', 'the first password');
      const publicClient = await app.createClient({ isPublic: true });
      rowsBefore = await countRows();
      // Two at a time: each run boots its own Nest context.
      const queue = [...cases];
      const worker = async (): Promise<void> => {
        for (let next = queue.shift(); next; next = queue.shift()) {
          const [name, args] = next;
          results.set(name, await cli(args.map((arg) => (arg === '<public>' ? publicClient.clientId : arg))));
        }
      };
      await Promise.all([worker(), worker()]);
      rowsAfter = await countRows();
      publicSecretHash = (await rawClientRow(publicClient.clientId)).secret_hash;
    }, 120_000);

    it.each(cases)('%s', (name, _args, message) => {
      const result = results.get(name)!;
      expect(result.code).not.toBe(0);
      expect(result.code).not.toBeNull();
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
    });

    it('writes nothing to the database', () => {
      expect(rowsAfter).toEqual(rowsBefore);
      expect(publicSecretHash).toBeNull();
    });
  });
});
