/**
 * MAC tokens (issue #8): draft-ietf-oauth-v2-http-mac-02 §4 (issuing MAC credentials: token_type
 * "mac", mac_key, mac_algorithm) and §3 (MAC-signed requests to the data API), with RFC 6750 §3.1
 * error codes under the MAC scheme, nonces that stop replays across instances, and mac_keys that
 * are encrypted at rest and never logged.
 */
import { jest } from '@jest/globals';
import { execFile } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { promisify } from 'node:util';
import { ClientsService } from '../../src/clients/clients.service.js';
import { computeMac, macAuthorizationHeader, type MacRequestParts } from '../../src/common/mac-signature.js';
import { hashSecret } from '../../src/common/secrets.js';
import { PurgeService } from '../../src/housekeeping/purge.service.js';
import { ApiClient, takeServerErrors, type ApiResponse } from '../helpers/api-client.js';
import { runCli, PROJECT } from '../helpers/cli.js';
import { basicAuth, obtainCode, tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';
import { within } from '../helpers/within.js';

const WINDOW = 300;
const SCOPES = 'notes:read notes:write';

interface MacCredentials {
  token: string;
  key: string;
  refreshToken?: string;
}

type Overrides = Partial<Omit<MacRequestParts, 'ts'>> & { ts?: number; key?: string; id?: string };

/** Every pino line the app writes, as text. */
class LogCapture {
  readonly lines: string[] = [];
  write(line: string): void {
    this.lines.push(line);
  }
}

describe('MAC tokens (draft-ietf-oauth-v2-http-mac-02)', () => {
  let app: TestApp;
  const logs = new LogCapture();
  let macClient: RegisteredClient;
  let bearerClient: RegisteredClient;
  let introspector: RegisteredClient;
  let alice: TestUser;
  let mac: MacCredentials;
  let origin: URL;
  /** Every mac_key this file was given: none may reach the database in clear or a log line. */
  const issuedKeys: string[] = [];
  let sequence = 0;

  async function registerClient(name: string, options: { accessTokenType?: 'mac' | 'bearer'; grantTypes?: ('authorization_code' | 'refresh_token' | 'client_credentials')[]; scope?: string } = {}): Promise<RegisteredClient> {
    const redirectUri = 'http://localhost:8080/callback';
    const grantTypes = options.grantTypes ?? ['authorization_code', 'refresh_token'];
    const { client, secret } = await app.app.get(ClientsService).create({
      name,
      redirectUris: grantTypes.includes('authorization_code') ? [redirectUri] : [],
      scope: options.scope ?? SCOPES,
      grantTypes,
      accessTokenType: options.accessTokenType,
    });
    return { clientId: client.id, clientSecret: secret, redirectUri };
  }

  /** The authorization code flow (login, consent, /token) for alice. */
  async function codeFlow(client: RegisteredClient, scope = SCOPES): Promise<Record<string, unknown>> {
    const { code, pkce } = await obtainCode(app, client, alice, { scope });
    const result = await tokenRequest(app, client, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier });
    expect(result.status).toBe(200);
    if (typeof result.body.mac_key === 'string') issuedKeys.push(result.body.mac_key);
    return result.body;
  }

  async function macTokens(scope = SCOPES): Promise<MacCredentials> {
    const body = await codeFlow(macClient, scope);
    return { token: body.access_token as string, key: body.mac_key as string, refreshToken: body.refresh_token as string };
  }

  const now = () => Math.floor(app.clock.now().getTime() / 1000);
  const freshNonce = () => `nonce-${process.pid}-${sequence++}`;

  /** The MAC Authorization header for a request to the test server, with any part of the signed request changed. */
  function authorization(credentials: MacCredentials, method: string, path: string, overrides: Overrides = {}): string {
    return macAuthorizationHeader(overrides.id ?? credentials.token, overrides.key ?? credentials.key, {
      ts: String(overrides.ts ?? now()),
      nonce: overrides.nonce ?? freshNonce(),
      method: overrides.method ?? method,
      requestUri: overrides.requestUri ?? path,
      host: overrides.host ?? origin.hostname,
      port: overrides.port ?? Number(origin.port),
      ext: overrides.ext,
    });
  }

  function signed(credentials: MacCredentials, method: string, path: string, json?: unknown, overrides: Overrides = {}): Promise<ApiResponse> {
    return new ApiClient(app).request(method, path, { authorization: authorization(credentials, method, path, overrides), json });
  }

  /** RFC 6750 §3.1 under the MAC scheme: the code in `WWW-Authenticate: MAC error="…"` and in the JSON body. */
  function expectMacError(response: ApiResponse, status: number, error: string): void {
    expect({ status: response.status, challenge: response.headers.get('www-authenticate'), body: response.json }).toEqual({
      status,
      challenge: expect.stringMatching(new RegExp(`^MAC error="${error}", error_description="[^"]+"`)),
      body: { error, error_description: expect.any(String) },
    });
  }

  beforeAll(async () => {
    app = await TestApp.start({ PURGE_INTERVAL_SECONDS: '0' }, { level: 'trace', destination: logs });
    origin = new URL(app.baseUrl);
    macClient = await registerClient('MAC app', { accessTokenType: 'mac' });
    bearerClient = await registerClient('Bearer app');
    introspector = await registerClient('Resource server', { grantTypes: ['client_credentials'], scope: 'tokens:introspect' });
    alice = await app.createUser();
    mac = await macTokens();
  });
  afterAll(async () => app?.stop());
  afterEach(() => jest.restoreAllMocks());
  afterEach(() => expect(takeServerErrors()).toEqual([]));

  describe('issuing MAC credentials (§4.1)', () => {
    it('the authorization code grant gives a MAC client token_type "mac", a mac_key and mac_algorithm hmac-sha-256', async () => {
      const body = await codeFlow(macClient);
      expect(body).toEqual({
        access_token: expect.stringMatching(/^lk_at_[A-Za-z0-9_-]{43}$/),
        token_type: 'mac',
        mac_key: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        mac_algorithm: 'hmac-sha-256',
        expires_in: 3600,
        refresh_token: expect.stringMatching(/^lk_rt_/),
        scope: SCOPES,
      });
      expect(body.mac_key).not.toBe(mac.key);
    });

    it('refresh gives a new MAC token with a new mac_key; each key signs for its own token only', async () => {
      const first = await macTokens();
      const refreshed = await tokenRequest(app, macClient, { grant_type: 'refresh_token', refresh_token: first.refreshToken! });
      expect(refreshed.status).toBe(200);
      expect(refreshed.body).toMatchObject({ token_type: 'mac', mac_algorithm: 'hmac-sha-256', mac_key: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
      issuedKeys.push(refreshed.body.mac_key as string);
      const second: MacCredentials = { token: refreshed.body.access_token as string, key: refreshed.body.mac_key as string };
      expect(second.key).not.toBe(first.key);
      expect((await signed(second, 'GET', '/api/v1/notes')).status).toBe(200);
      expectMacError(await signed(second, 'GET', '/api/v1/notes', undefined, { key: first.key }), 401, 'invalid_token');
    });

    it('client_credentials gives a MAC client a MAC token too (and no refresh token)', async () => {
      const service = await registerClient('MAC service', { accessTokenType: 'mac', grantTypes: ['client_credentials'], scope: 'notes:read' });
      const result = await tokenRequest(app, service, { grant_type: 'client_credentials' });
      expect(result.status).toBe(200);
      expect(result.body).toEqual({ access_token: expect.stringMatching(/^lk_at_/), token_type: 'mac', mac_key: expect.any(String), mac_algorithm: 'hmac-sha-256', expires_in: 3600, scope: 'notes:read' });
      issuedKeys.push(result.body.mac_key as string);
    });

    it('bearer stays the default: no mac_key, no mac_algorithm', async () => {
      const body = await codeFlow(bearerClient);
      expect(body.token_type).toBe('bearer');
      expect(body).not.toHaveProperty('mac_key');
      expect(body).not.toHaveProperty('mac_algorithm');
    });
  });

  describe('MAC-signed requests to the data API (§3)', () => {
    it('create, read, list, replace, patch, HEAD, OPTIONS and delete, each request signed', async () => {
      const created = await signed(mac, 'POST', '/api/v1/notes', { title: 'Signed', tags: ['mac'] });
      expect(created.status).toBe(201);
      const id = (created.json as { id: string }).id;
      const path = `/api/v1/notes/${id}`;
      expect((await signed(mac, 'GET', path)).json).toMatchObject({ id, title: 'Signed' });
      const listed = await signed(mac, 'GET', '/api/v1/notes?tags=mac&limit=5');
      expect({ status: listed.status, ids: (listed.json as { id: string }[]).map((n) => n.id) }).toEqual({ status: 200, ids: [id] });
      expect((await signed(mac, 'PUT', path, { title: 'Replaced', tags: ['mac'] })).json).toMatchObject({ title: 'Replaced' });
      const patched = await new ApiClient(app).patch(path, { done: true }, { authorization: authorization(mac, 'PATCH', path) });
      expect(patched.json).toMatchObject({ title: 'Replaced', done: true });
      expect((await signed(mac, 'HEAD', path)).status).toBe(200);
      expect((await signed(mac, 'OPTIONS', path)).status).toBe(200);
      expect((await signed(mac, 'DELETE', path)).status).toBe(204);
      expect((await signed(mac, 'GET', path)).status).toBe(404);
    });

    it('takes host and port from the Host header the client sent', async () => {
      const path = '/api/v1/notes';
      const send = (host: string, signedFor: { host: string; port: number }) =>
        new Promise<number>((resolve, reject) => {
          const header = authorization(mac, 'GET', path, signedFor);
          const req = httpRequest({ host: origin.hostname, port: origin.port, path, method: 'GET', headers: { host, authorization: header } }, (res) => {
            res.resume();
            resolve(res.statusCode!);
          });
          req.on('error', reject);
          req.end();
        });
      expect(await send('API.Example.test:8443', { host: 'api.example.test', port: 8443 })).toBe(200);
      // No port in Host: the scheme's default (80 for http).
      expect(await send('api.example.test', { host: 'api.example.test', port: 80 })).toBe(200);
      expect(await send('api.example.test', { host: 'api.example.test', port: Number(origin.port) })).toBe(401);
    });

    it('a request sent twice is refused the second time: the nonce was already used (§4.1), and nothing is written twice', async () => {
      const title = `once-${freshNonce()}`;
      const header = authorization(mac, 'POST', '/api/v1/notes');
      const send = () => new ApiClient(app).request('POST', '/api/v1/notes', { authorization: header, json: { title } });
      expect((await send()).status).toBe(201);
      const replay = await send();
      expectMacError(replay, 401, 'invalid_token');
      expect(replay.json).toMatchObject({ error_description: 'The nonce was already used' });
      const titles = ((await signed(mac, 'GET', `/api/v1/notes?title=${title}`)).json as unknown[]).length;
      expect(titles).toBe(1);
    });

    it('20 parallel sends of one signed request: exactly one succeeds', async () => {
      const title = `race-${freshNonce()}`;
      const header = authorization(mac, 'POST', '/api/v1/notes');
      const results = await Promise.all(Array.from({ length: 20 }, () => new ApiClient(app).request('POST', '/api/v1/notes', { authorization: header, json: { title } })));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([201, ...Array<number>(19).fill(401)]);
      for (const refused of results.filter((r) => r.status === 401)) expectMacError(refused, 401, 'invalid_token');
      expect(((await signed(mac, 'GET', `/api/v1/notes?title=${title}`)).json as unknown[]).length).toBe(1);
    });

    it('the same nonce with another timestamp is a new request', async () => {
      const nonce = freshNonce();
      // One reading of the clock: read again after the first request, a second boundary in between
      // would make `now() - 1` the first request's own timestamp, a replay.
      const ts = now();
      expect((await signed(mac, 'GET', '/api/v1/notes', undefined, { nonce, ts })).status).toBe(200);
      expect((await signed(mac, 'GET', '/api/v1/notes', undefined, { nonce, ts: ts - 1 })).status).toBe(200);
    });

    it('accepts timestamps up to MAC_TIMESTAMP_WINDOW_SECONDS away, either way', async () => {
      expect((await signed(mac, 'GET', '/api/v1/notes', undefined, { ts: now() - WINDOW + 2 })).status).toBe(200);
      expect((await signed(mac, 'GET', '/api/v1/notes', undefined, { ts: now() + WINDOW - 2 })).status).toBe(200);
    });
  });

  describe('refused MAC requests (RFC 6750 §3.1 codes, WWW-Authenticate: MAC error="…")', () => {
    const path = '/api/v1/notes?limit=3';
    it.each<[string, () => Overrides]>([
      ['a MAC computed with another key', () => ({ key: 'x'.repeat(43) })],
      ['another path signed', () => ({ requestUri: '/api/v1/photos?limit=3' })],
      ['another query signed', () => ({ requestUri: '/api/v1/notes?limit=4' })],
      ['another method signed', () => ({ method: 'DELETE' })],
      ['another host signed', () => ({ host: 'localhost' })],
      ['another port signed', () => ({ port: Number(origin.port) + 1 })],
      ['a timestamp beyond the window in the past', () => ({ ts: now() - WINDOW - 5 })],
      ['a timestamp beyond the window in the future', () => ({ ts: now() + WINDOW + 5 })],
      ['an unknown token', () => ({ id: 'lk_at_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' })],
    ])('%s → 401 invalid_token; the nonce stays unused', async (_case, overrides) => {
      const nonce = freshNonce();
      expectMacError(await signed(mac, 'GET', path, undefined, { ...overrides(), nonce }), 401, 'invalid_token');
      // Everything is checked before the nonce is recorded: the genuine request with that nonce still passes.
      expect((await signed(mac, 'GET', path, undefined, { nonce })).status).toBe(200);
    });

    it('a mac value that was tampered with → 401 invalid_token', async () => {
      const header = authorization(mac, 'GET', path);
      const tampered = header.replace(/mac="(.)/, (_m, first: string) => `mac="${first === 'A' ? 'B' : 'A'}`);
      expect(tampered).not.toBe(header);
      expectMacError(await new ApiClient(app).get(path, { authorization: tampered }), 401, 'invalid_token');
    });

    it('an ext other than the one signed → 401 invalid_token', async () => {
      const ts = String(now());
      const nonce = freshNonce();
      const value = computeMac(mac.key, { ts, nonce, method: 'GET', requestUri: path, host: origin.hostname, port: Number(origin.port), ext: 'signed' });
      const header = `MAC id="${mac.token}", ts="${ts}", nonce="${nonce}", ext="sent", mac="${value}"`;
      expectMacError(await new ApiClient(app).get(path, { authorization: header }), 401, 'invalid_token');
      expect((await new ApiClient(app).get(path, { authorization: header.replace('ext="sent"', 'ext="signed"') })).status).toBe(200);
    });

    it.each<[string, (header: string) => string]>([
      ['no id', (h) => h.replace(/id="[^"]*", /, '')],
      ['no ts', (h) => h.replace(/ts="[^"]*", /, '')],
      ['no nonce', (h) => h.replace(/nonce="[^"]*", /, '')],
      ['no mac', (h) => h.replace(/, mac="[^"]*"/, '')],
      ['a repeated nonce parameter', (h) => h.replace(/(nonce="[^"]*")/, '$1, $1')],
      ['a repeated mac parameter', (h) => `${h}, ${/mac="[^"]*"/.exec(h)![0]}`],
      ['a non-numeric ts', (h) => h.replace(/ts="[^"]*"/, 'ts="yesterday"')],
      ['an unquoted value', (h) => h.replace(/nonce="([^"]*)"/, 'nonce=$1')],
      ['no parameters at all', () => 'MAC'],
      ['garbage after the scheme', () => 'MAC 7f3a!!'],
      ['a nonce of 129 characters', (h) => h.replace(/nonce="[^"]*"/, `nonce="${'n'.repeat(129)}"`)],
    ])('%s → 400 invalid_request', async (_case, change) => {
      const response = await new ApiClient(app).get(path, { authorization: change(authorization(mac, 'GET', path)) });
      expectMacError(response, 400, 'invalid_request');
    });

    it('a MAC token presented as a bearer token → 401 invalid_token (Bearer challenge)', async () => {
      const response = await new ApiClient(app, mac.token).get(path);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="latchkey", error="invalid_token"/);
      expect(response.json).toEqual({ error: 'invalid_token', error_description: expect.any(String) });
    });

    it('a bearer token presented with a MAC signature → 401 invalid_token', async () => {
      const bearer = (await codeFlow(bearerClient)).access_token as string;
      expect((await new ApiClient(app, bearer).get(path)).status).toBe(200);
      expectMacError(await signed({ token: bearer, key: 'any key at all' }, 'GET', path), 401, 'invalid_token');
    });

    it('a refresh token as the MAC id → 401 invalid_token', async () => {
      expectMacError(await signed({ token: mac.refreshToken!, key: mac.key }, 'GET', path), 401, 'invalid_token');
    });

    it('a revoked MAC token → 401 invalid_token from the very next request', async () => {
      const doomed = await macTokens();
      expect((await signed(doomed, 'GET', path)).status).toBe(200);
      const revoked = await fetch(app.url('/revoke'), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(macClient.clientId, macClient.clientSecret!) },
        body: new URLSearchParams({ token: doomed.token }).toString(),
      });
      expect(revoked.status).toBe(200);
      expectMacError(await signed(doomed, 'GET', path), 401, 'invalid_token');
    });

    it('a request whose timestamp has aged out of the window (the clock moved on) → 401; signed anew it passes', async () => {
      const header = authorization(mac, 'GET', path);
      const later = new Date(app.clock.now().getTime() + (WINDOW + 1) * 1000);
      jest.spyOn(app.clock, 'now').mockReturnValue(later);
      expectMacError(await new ApiClient(app).get(path, { authorization: header }), 401, 'invalid_token');
      expect((await signed(mac, 'GET', path)).status).toBe(200);
    });

    it('an expired MAC token → 401 invalid_token, even freshly signed', async () => {
      jest.spyOn(app.clock, 'now').mockReturnValue(new Date(Date.now() + 3601 * 1000));
      expectMacError(await signed(mac, 'GET', path), 401, 'invalid_token');
    });

    it('a token without the scope → 403 insufficient_scope, in the MAC challenge', async () => {
      const reader = await macTokens('notes:read');
      const response = await signed(reader, 'POST', '/api/v1/notes', { title: 'no' });
      expectMacError(response, 403, 'insufficient_scope');
      expect(response.headers.get('www-authenticate')).toContain('scope="notes:write"');
    });

    it('no credentials at all: the challenge offers both schemes', async () => {
      const response = await new ApiClient(app).get(path);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="latchkey", DPoP algs="ES256 ES384 PS256 RS256 EdDSA Ed25519", MAC');
    });
  });

  describe('introspection (RFC 7662 §2.2) reports the token type', () => {
    it.each([
      ['mac', () => Promise.resolve(mac.token)],
      ['bearer', async () => (await codeFlow(bearerClient)).access_token as string],
    ])('%s', async (type, token) => {
      const response = await fetch(app.url('/introspect'), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(introspector.clientId, introspector.clientSecret!) },
        body: new URLSearchParams({ token: await token() }).toString(),
      });
      expect(await response.json()).toMatchObject({ active: true, token_type: type });
    });
  });

  describe('the mac_key at rest', () => {
    function encodings(key: string): string[] {
      const bytes = Buffer.from(key, 'base64url');
      return [key, bytes.toString('base64'), bytes.toString('base64').replace(/=+$/, ''), bytes.toString('hex'), bytes.toString('hex').toUpperCase(), hashSecret(key)];
    }

    it('is stored only encrypted: no issued key appears in the tokens table in any encoding', async () => {
      const rows = (await app.dataSource.query('SELECT * FROM "tokens"')) as Record<string, unknown>[];
      const dump = JSON.stringify(rows);
      expect(issuedKeys.length).toBeGreaterThan(5);
      for (const key of issuedKeys) for (const encoded of encodings(key)) expect(dump).not.toContain(encoded);
      const [row] = (await app.dataSource.query('SELECT "token_type", "mac_key" FROM "tokens" WHERE "token_hash" = $1'.replace('$1', app.dataSource.options.type === 'postgres' ? '$1' : '?'), [hashSecret(mac.token)])) as { token_type: string; mac_key: string }[];
      expect(row).toEqual({ token_type: 'mac', mac_key: expect.stringMatching(/^v1\.[A-Za-z0-9_-]{8}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/) });
    });

    it('a ciphertext moved onto another token row does not decrypt there (bound to the token hash)', async () => {
      const victim = await macTokens();
      const thief = await macTokens();
      expect((await signed(thief, 'GET', '/api/v1/notes')).status).toBe(200);
      const p = (n: number) => (app.dataSource.options.type === 'postgres' ? `$${n}` : '?');
      const [source] = (await app.dataSource.query(`SELECT "mac_key" FROM "tokens" WHERE "token_hash" = ${p(1)}`, [hashSecret(victim.token)])) as { mac_key: string }[];
      await app.dataSource.query(`UPDATE "tokens" SET "mac_key" = ${p(1)} WHERE "token_hash" = ${p(2)}`, [source.mac_key, hashSecret(thief.token)]);
      // On PostgreSQL this SQL reaches the instance's token cache through the table's notification:
      // at once, not synchronously (NotifiedCache); a request sent in between may still see the row it kept.
      let refused: ApiResponse | undefined;
      expect(await within(1_000, async () => (refused = await signed(thief, 'GET', '/api/v1/notes')).status !== 200)).toBe(true);
      expectMacError(refused!, 401, 'invalid_token');
      expectMacError(await signed({ token: thief.token, key: victim.key }, 'GET', '/api/v1/notes'), 401, 'invalid_token');
    });

    it('without TOKEN_ENCRYPTION_KEY, the encryption key is generated once and kept in the database for every instance', async () => {
      const rows = (await app.dataSource.query(`SELECT "name" FROM "server_keys" WHERE "name" = 'mac-key-encryption'`)) as unknown[];
      expect(rows).toHaveLength(1);
    });
  });

  describe('registration (RFC 7591 metadata access_token_type, a Latchkey extension)', () => {
    let adminToken: string;

    async function register(body: unknown, token = adminToken): Promise<{ status: number; headers: Headers; json: Record<string, unknown> }> {
      const response = await fetch(app.url('/register'), { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: response.status, headers: response.headers, json: (await response.json()) as Record<string, unknown> };
    }

    beforeAll(async () => {
      const admin = await registerClient('admin', { grantTypes: ['client_credentials'], scope: 'clients:register' });
      adminToken = (await tokenRequest(app, admin, { grant_type: 'client_credentials' })).body.access_token as string;
    });

    it('accepts "mac" and echoes it; the client then receives MAC tokens', async () => {
      const registered = await register({ client_name: 'Registered MAC service', grant_types: ['client_credentials'], scope: 'notes:read', access_token_type: 'mac' });
      expect(registered.status).toBe(201);
      expect(registered.json.access_token_type).toBe('mac');
      // RFC 7592 §2.1: reading the registration back shows it too.
      const read = await fetch(app.url(`/register/${encodeURIComponent(registered.json.client_id as string)}`), { headers: { authorization: `Bearer ${registered.json.registration_access_token as string}` } });
      expect(((await read.json()) as Record<string, unknown>).access_token_type).toBe('mac');
      const client: RegisteredClient = { clientId: registered.json.client_id as string, clientSecret: registered.json.client_secret as string, redirectUri: '' };
      const issued = await tokenRequest(app, client, { grant_type: 'client_credentials' });
      expect(issued.body).toMatchObject({ token_type: 'mac', mac_algorithm: 'hmac-sha-256', mac_key: expect.any(String) });
      issuedKeys.push(issued.body.mac_key as string);
    });

    it('an administrator holding a MAC token registers clients with signed requests, as every protected route takes them (issue 17: one authenticator); as a bearer token it is refused', async () => {
      const macAdmin = await registerClient('MAC admin', { accessTokenType: 'mac', grantTypes: ['client_credentials'], scope: 'clients:register' });
      const issued = await tokenRequest(app, macAdmin, { grant_type: 'client_credentials' });
      const credentials: MacCredentials = { token: issued.body.access_token as string, key: issued.body.mac_key as string };
      issuedKeys.push(credentials.key);
      const metadata = { client_name: 'Registered by a MAC admin', grant_types: ['client_credentials'], scope: 'notes:read' };
      const before = await app.dataSource.query('SELECT COUNT(*) AS n FROM clients');

      const unsigned = await register(metadata, credentials.token);
      expect({ status: unsigned.status, error: unsigned.json.error }).toEqual({ status: 401, error: 'invalid_token' });
      expectMacError(await signed(credentials, 'POST', '/register', metadata, { key: 'a'.repeat(43) }), 401, 'invalid_token');
      expect(await app.dataSource.query('SELECT COUNT(*) AS n FROM clients')).toEqual(before);

      const registered = await signed(credentials, 'POST', '/register', metadata);
      expect(registered.status).toBe(201);
      expect(registered.json).toMatchObject({ client_name: 'Registered by a MAC admin', registration_access_token: expect.any(String) });
    });

    it('defaults to "bearer", and says so', async () => {
      const registered = await register({ client_name: 'Registered bearer service', grant_types: ['client_credentials'], scope: 'notes:read' });
      expect(registered.status).toBe(201);
      expect(registered.json.access_token_type).toBe('bearer');
    });

    it.each([['MAC'], ['jwt'], [''], [5], [null], [['mac']]])('refuses access_token_type %j → 400 invalid_client_metadata', async (value) => {
      const refused = await register({ client_name: 'Odd', grant_types: ['client_credentials'], scope: 'notes:read', access_token_type: value });
      expect({ status: refused.status, error: refused.json.error }).toEqual({ status: 400, error: 'invalid_client_metadata' });
    });

    it('a MAC token presented as a bearer token cannot register clients', async () => {
      const macAdmin = await registerClient('MAC admin', { accessTokenType: 'mac', grantTypes: ['client_credentials'], scope: 'clients:register' });
      const issued = await tokenRequest(app, macAdmin, { grant_type: 'client_credentials' });
      expect(issued.body.token_type).toBe('mac');
      issuedKeys.push(issued.body.mac_key as string);
      const refused = await register({ client_name: 'Nope', grant_types: ['client_credentials'] }, issued.body.access_token as string);
      expect({ status: refused.status, error: refused.json.error }).toEqual({ status: 401, error: 'invalid_token' });
    });
  });

  describe('the admin CLI: clients:create --token-type', () => {
    beforeAll(async () => {
      await promisify(execFile)('npm', ['run', '-s', 'build'], { cwd: PROJECT });
    }, 180_000);

    it('--token-type mac registers a MAC client', async () => {
      const result = await runCli(['clients:create', '--name', 'CLI MAC', '--grant-type', 'client_credentials', '--scope', 'notes:read', '--token-type', 'mac']);
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
      const view = JSON.parse(result.stdout) as Record<string, string>;
      expect(view.access_token_type).toBe('mac');
      const issued = await tokenRequest(app, { clientId: view.client_id, clientSecret: view.client_secret, redirectUri: '' }, { grant_type: 'client_credentials' });
      expect(issued.body.token_type).toBe('mac');
      issuedKeys.push(issued.body.mac_key as string);
    });

    it('refuses another token type, naming the flag', async () => {
      const result = await runCli(['clients:create', '--name', 'CLI JWT', '--token-type', 'jwt']);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('--token-type jwt');
    });
  });

  describe('housekeeping', () => {
    it('purges nonces once their timestamp has left the window (and the grace period)', async () => {
      const count = async () => Number(((await app.dataSource.query('SELECT COUNT(*) AS "n" FROM "mac_nonces"')) as { n: number | string }[])[0].n);
      const before = await count();
      expect(before).toBeGreaterThan(10);
      expect((await app.app.get(PurgeService).purge()).macNonces).toBe(0);
      // Past the window after the latest accepted ts (up to now + WINDOW), plus PURGE_GRACE_SECONDS.
      jest.spyOn(app.clock, 'now').mockReturnValue(new Date(Date.now() + (2 * WINDOW + 3600 + 10) * 1000));
      expect((await app.app.get(PurgeService).purge()).macNonces).toBe(before);
      expect(await count()).toBe(0);
    });
  });

  describe('documentation', () => {
    it("the shell recipe of docs/reference/mac-tokens.md (printf, openssl, curl) signs a request the server accepts", async () => {
      const script = [
        'TS=$(date +%s); NONCE=$(openssl rand -hex 8)',
        `MAC=$(printf '%s\\n%s\\nGET\\n/api/v1/notes\\n${origin.hostname}\\n${origin.port}\\n\\n' "$TS" "$NONCE" | openssl dgst -sha256 -hmac "$MAC_KEY" -binary | base64)`,
        `curl -s -o /dev/null -w '%{http_code}' ${app.url('/api/v1/notes')} -H "Authorization: MAC id=\\"$TOKEN\\", ts=\\"$TS\\", nonce=\\"$NONCE\\", mac=\\"$MAC\\""`,
      ].join('\n');
      const { stdout } = await promisify(execFile)('bash', ['-c', script], { env: { ...process.env, TOKEN: mac.token, MAC_KEY: mac.key } });
      expect(stdout).toBe('200');
    });

    it('the OpenAPI document offers the MAC scheme beside bearer', async () => {
      const document = (await (await fetch(app.url('/api/docs/json'))).json()) as { components: { securitySchemes: Record<string, { type: string; scheme?: string }> } };
      expect(document.components.securitySchemes.mac).toMatchObject({ type: 'http', scheme: 'mac' });
    });
  });

  describe('logs (everything above, at level trace)', () => {
    it('no mac_key ever reached a log line', () => {
      expect(logs.lines.length).toBeGreaterThan(50);
      expect(issuedKeys.length).toBeGreaterThan(10);
      const all = logs.lines.join('\n');
      for (const key of issuedKeys) expect(all).not.toContain(key);
    });
  });
});
