/**
 * Browser apps (issue 34 part 1): which page of another origin may read which answer (the Fetch
 * standard's CORS protocol), over real HTTP against the real app. Node's fetch sends the Origin
 * and Access-Control-Request-* headers as a browser would; what a browser then does with the
 * answer is test/browser/spa.e2e-spec.ts.
 */
import { jest } from '@jest/globals';
import { Client } from '../../src/clients/client.entity.js';
import { ClientStore } from '../../src/clients/client.store.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { obtainAccessToken } from '../helpers/api-client.js';
import { obtainCode, postToken } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';

/** Client A's pages (a public client: a single-page app). */
const APP_A = 'https://app-a.example.test';
/** Client B's pages (another public client). */
const APP_B = 'https://app-b.example.test';
/** Listed in CORS_ALLOWED_ORIGINS: registers no redirect URI, allowed for every client. */
const CONFIGURED = 'https://admin.example.test';
const ALLOWED_ORIGINS = [APP_A, APP_B, CONFIGURED];

/** Origins that must match nothing: unknown, look-alikes of A, opaque, and other spellings of A. */
const REFUSED_ORIGINS = [
  'https://evil.example.test',
  'https://app-a.example.test.evil.test',
  'https://evil-app-a.example.test',
  'https://app-a.example',
  'null',
  'http://app-a.example.test',
  'https://app-a.example.test:8443',
  'https://app-a.example.test:443',
  'https://app-a.example.test/',
  'HTTPS://APP-A.EXAMPLE.TEST',
  'https://app-a.example.test, https://evil.example.test',
  '*',
  '',
];

const POSTGRES = Boolean(process.env.TEST_DATABASE_URL);

const CORS_REQUEST_HEADERS = ['authorization', 'content-type', 'dpop', 'if-match', 'if-none-match'];
const CORS_EXPOSED_HEADERS = ['www-authenticate', 'dpop-nonce', 'etag', 'location', 'link', 'retry-after'];

function list(header: string | null): string[] {
  return (header ?? '')
    .split(',')
    .map((value) => value.trim().toLowerCase())
    .filter(Boolean);
}

/** A preflight as a browser sends it before a request it may not send without asking. */
async function preflight(app: TestApp, path: string, origin: string, method: string, headers = 'authorization, dpop'): Promise<Response> {
  const response = await fetch(app.url(path), { method: 'OPTIONS', headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers } });
  await response.arrayBuffer();
  return response;
}

function corsHeaders(response: Response): Record<string, string | null> {
  return {
    allowOrigin: response.headers.get('access-control-allow-origin'),
    allowCredentials: response.headers.get('access-control-allow-credentials'),
  };
}

describe('CORS for browser apps (issue 34; Fetch standard §3.2)', () => {
  let app: TestApp;
  let user: TestUser;
  let clientA: RegisteredClient;
  let clientB: RegisteredClient;
  /** A confidential client whose tokens the data API and userinfo tests use. */
  let server: RegisteredClient;
  let accessToken: string;
  let noteId: string;

  beforeAll(async () => {
    app = await TestApp.start({ CORS_ALLOWED_ORIGINS: ` ${CONFIGURED} ,` });
    user = await app.createUser();
    clientA = await app.createClient({ name: 'App A', redirectUris: [`${APP_A}/callback`], isPublic: true, scope: 'openid notes:read notes:write' });
    clientB = await app.createClient({ name: 'App B', redirectUris: [`${APP_B}/callback`, 'com.example.app-b:/callback'], isPublic: true, scope: 'openid notes:read notes:write' });
    server = await app.createClient({ name: 'Server app', redirectUris: ['https://server.example.test/cb'], scope: 'openid notes:read notes:write' });
    accessToken = await obtainAccessToken(app, server, user, 'openid notes:read notes:write');
    const created = await fetch(app.url('/api/v1/notes'), { method: 'POST', headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ title: 'CORS' }) });
    noteId = ((await created.json()) as { id: string }).id;
  });
  afterAll(async () => app?.stop());

  /** A code of `client` for `user`, redeemed by a page at `origin`. */
  async function redeem(client: RegisteredClient, origin: string): Promise<Awaited<ReturnType<typeof postToken>>> {
    const { code, pkce } = await obtainCode(app, client, user);
    return postToken(app, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier, client_id: client.clientId }, { origin });
  }

  describe('public documents: any page may read them (Access-Control-Allow-Origin: *)', () => {
    const PATHS = ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server', '/.well-known/jwks.json', '/.well-known/oauth-authorization-server/tenant'];

    it.each(PATHS.flatMap((path) => [APP_A, 'https://evil.example.test', 'null', undefined].map((origin) => [path, origin ?? '(no Origin)'] as const)))('%s from %s', async (path, origin) => {
      const response = await fetch(app.url(path), { headers: origin.startsWith('(') ? {} : { origin } });
      await response.arrayBuffer();
      expect(corsHeaders(response)).toEqual({ allowOrigin: '*', allowCredentials: null });
      expect(list(response.headers.get('vary'))).not.toContain('origin');
    });

    it.each(PATHS)('a preflight to %s is answered for any origin, GET and HEAD only', async (path) => {
      const response = await preflight(app, path, 'https://evil.example.test', 'GET', 'x-anything');
      expect(response.status).toBe(204);
      expect(corsHeaders(response)).toEqual({ allowOrigin: '*', allowCredentials: null });
      expect(list(response.headers.get('access-control-allow-methods'))).toEqual(['get', 'head']);
      expect((await preflight(app, path, APP_A, 'POST')).status).not.toBe(204);
    });
  });

  describe('preflights to the endpoints a browser app calls with a token', () => {
    const ENDPOINTS: [string, string, string[]][] = [
      ['/token', 'POST', ['POST']],
      ['/revoke', 'POST', ['POST']],
      ['/userinfo', 'GET', ['GET', 'POST']],
      ['/userinfo', 'POST', ['GET', 'POST']],
      ['/api/v1/notes', 'GET', ['GET', 'HEAD', 'POST', 'OPTIONS']],
      ['/api/v1/notes', 'POST', ['GET', 'HEAD', 'POST', 'OPTIONS']],
      ['/api/v1/notes/{id}', 'PUT', ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']],
      ['/api/v1/notes/{id}', 'PATCH', ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']],
      ['/api/v1/notes/{id}', 'DELETE', ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']],
    ];
    const at = (path: string): string => path.replace('{id}', noteId);

    it.each(ENDPOINTS.flatMap(([path, method, methods]) => ALLOWED_ORIGINS.map((origin) => [path, method, origin, methods] as const)))(
      '%s %s from %s: 204 with the methods, the request headers, a max age; Vary: Origin; no credentials',
      async (path, method, origin, methods) => {
        const response = await preflight(app, at(path), origin, method, 'authorization, content-type, dpop, if-match');
        expect(response.status).toBe(204);
        expect(corsHeaders(response)).toEqual({ allowOrigin: origin, allowCredentials: null });
        expect(list(response.headers.get('access-control-allow-methods')).sort()).toEqual(methods.map((m) => m.toLowerCase()).sort());
        expect(list(response.headers.get('access-control-allow-headers'))).toEqual(expect.arrayContaining(CORS_REQUEST_HEADERS));
        expect(Number(response.headers.get('access-control-max-age'))).toBeGreaterThan(0);
        expect(list(response.headers.get('vary'))).toContain('origin');
      },
    );

    it.each(ENDPOINTS.flatMap(([path, method]) => REFUSED_ORIGINS.map((origin) => [path, method, origin] as const)))('%s %s from %j: answered as without CORS', async (path, method, origin) => {
      const response = await preflight(app, at(path), origin, method);
      expect(response.status).not.toBe(204);
      expect(corsHeaders(response)).toEqual({ allowOrigin: null, allowCredentials: null });
    });

    it.each([
      ['/api/v1/notes', 'PATCH'],
      ['/token', 'GET'],
      ['/userinfo', 'DELETE'],
      ['/api/v1/no-such-collection', 'GET'],
    ])('%s: a preflight for %s, which the route does not answer, is not answered (the browser then sends nothing)', async (path, method) => {
      const response = await preflight(app, path, APP_A, method);
      expect(response.status).not.toBe(204);
      expect(response.headers.get('access-control-allow-methods')).toBeNull();
    });

    it("the data API's own OPTIONS (no preflight: no Access-Control-Request-Method) still describes the collection, with Allow", async () => {
      const plain = await fetch(app.url('/api/v1/notes'), { method: 'OPTIONS', headers: { authorization: `Bearer ${accessToken}` } });
      expect(plain.status).toBe(200);
      expect(list(plain.headers.get('allow'))).toEqual(['get', 'head', 'post', 'options']);
      expect(plain.headers.get('access-control-allow-origin')).toBeNull();
      // The same request from a page: the same answer, which the page may read.
      const fromPage = await fetch(app.url('/api/v1/notes'), { method: 'OPTIONS', headers: { authorization: `Bearer ${accessToken}`, origin: APP_A } });
      expect(fromPage.status).toBe(200);
      expect(await fromPage.json()).toEqual(await plain.json());
      expect(corsHeaders(fromPage)).toEqual({ allowOrigin: APP_A, allowCredentials: null });
      expect(list(fromPage.headers.get('access-control-expose-headers'))).toContain('allow');
      // Without a token, still 401 with its challenge.
      const anonymous = await fetch(app.url('/api/v1/notes'), { method: 'OPTIONS' });
      expect(anonymous.status).toBe(401);
      await anonymous.arrayBuffer();
    });
  });

  describe('answers to the real requests', () => {
    type Call = () => Promise<Response>;
    const bearer = (): Record<string, string> => ({ authorization: `Bearer ${accessToken}` });
    const CALLS: [string, (origin: string) => Call, number][] = [
      ['GET /userinfo', (origin) => () => fetch(app.url('/userinfo'), { headers: { ...bearer(), origin } }), 200],
      ['GET /userinfo without a token (401)', (origin) => () => fetch(app.url('/userinfo'), { headers: { origin } }), 401],
      ['GET /api/v1/notes', (origin) => () => fetch(app.url('/api/v1/notes'), { headers: { ...bearer(), origin } }), 200],
      ['GET /api/v1/notes/{id}', (origin) => () => fetch(app.url(`/api/v1/notes/${noteId}`), { headers: { ...bearer(), origin } }), 200],
      ['GET /api/v1/notes without a token (401)', (origin) => () => fetch(app.url('/api/v1/notes'), { headers: { origin } }), 401],
      ['PUT /api/v1/notes/{id} with a stale If-Match (412)', (origin) => () => fetch(app.url(`/api/v1/notes/${noteId}`), { method: 'PUT', headers: { ...bearer(), origin, 'content-type': 'application/json', 'if-match': '"stale"' }, body: '{"title":"x"}' }), 412],
      ['GET /api/v1/notes/{unknown} (404)', (origin) => () => fetch(app.url('/api/v1/notes/00000000-0000-4000-8000-000000000000'), { headers: { ...bearer(), origin } }), 404],
    ];

    it.each(CALLS.flatMap(([name, call, status]) => ALLOWED_ORIGINS.map((origin) => [name, origin, call, status] as const)))('%s from %s: the origin may read it, and the headers it needs', async (_name, origin, call, status) => {
      const response = await call(origin)();
      await response.arrayBuffer();
      expect(response.status).toBe(status);
      expect(corsHeaders(response)).toEqual({ allowOrigin: origin, allowCredentials: null });
      expect(list(response.headers.get('access-control-expose-headers'))).toEqual(expect.arrayContaining(CORS_EXPOSED_HEADERS));
      expect(list(response.headers.get('vary'))).toContain('origin');
      if (status === 401) expect(response.headers.get('www-authenticate')).toMatch(/^Bearer /);
    });

    it.each(CALLS.flatMap(([name, call, status]) => REFUSED_ORIGINS.map((origin) => [name, origin, call, status] as const)))('%s from %j: answered as without CORS', async (_name, origin, call, status) => {
      const response = await call(origin)();
      await response.arrayBuffer();
      expect(response.status).toBe(status);
      expect(corsHeaders(response)).toEqual({ allowOrigin: null, allowCredentials: null });
      expect(response.headers.get('access-control-expose-headers')).toBeNull();
      expect(list(response.headers.get('vary'))).toContain('origin');
    });

    it('without an Origin header: no CORS headers, only Vary: Origin beside what the route varies on', async () => {
      const response = await fetch(app.url('/api/v1/notes'), { headers: bearer() });
      await response.arrayBuffer();
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
      expect(list(response.headers.get('vary'))).toEqual(['authorization', 'origin']);
    });
  });

  describe('/token and /revoke: only the pages of the client the request names', () => {
    it("client A's page redeems A's code and may read the tokens", async () => {
      const result = await redeem(clientA, APP_A);
      expect(result.status).toBe(200);
      expect(result.headers.get('access-control-allow-origin')).toBe(APP_A);
      expect(result.headers.get('access-control-allow-credentials')).toBeNull();
      expect(list(result.headers.get('vary'))).toContain('origin');
      expect(list(result.headers.get('access-control-expose-headers'))).toEqual(expect.arrayContaining(['dpop-nonce', 'www-authenticate']));
    });

    it("a page of client B gets no Access-Control-Allow-Origin for client A's answer: the browser keeps it from the page", async () => {
      const result = await redeem(clientA, APP_B);
      expect(result.headers.get('access-control-allow-origin')).toBeNull();
      expect(result.headers.get('access-control-allow-credentials')).toBeNull();
    });

    it('an origin of CORS_ALLOWED_ORIGINS may read the answers of every client', async () => {
      expect((await redeem(clientA, CONFIGURED)).headers.get('access-control-allow-origin')).toBe(CONFIGURED);
      expect((await redeem(clientB, CONFIGURED)).headers.get('access-control-allow-origin')).toBe(CONFIGURED);
    });

    it("errors too: A's page reads invalid_grant for A; B's page does not; nobody reads an unknown client's invalid_client", async () => {
      const form = { grant_type: 'authorization_code', code: 'not-a-code', redirect_uri: clientA.redirectUri, code_verifier: 'x'.repeat(43), client_id: clientA.clientId };
      const own = await postToken(app, form, { origin: APP_A });
      expect({ status: own.status, error: own.body.error, allowOrigin: own.headers.get('access-control-allow-origin') }).toEqual({ status: 400, error: 'invalid_grant', allowOrigin: APP_A });
      const other = await postToken(app, form, { origin: APP_B });
      expect({ status: other.status, allowOrigin: other.headers.get('access-control-allow-origin') }).toEqual({ status: 400, allowOrigin: null });
      const unknown = await postToken(app, { ...form, client_id: 'no-such-client' }, { origin: APP_A });
      expect({ status: unknown.status, error: unknown.body.error, allowOrigin: unknown.headers.get('access-control-allow-origin') }).toEqual({ status: 401, error: 'invalid_client', allowOrigin: null });
    });

    it("/revoke: A's page may read the answer for A, B's page may not", async () => {
      const revoke = (origin: string): Promise<Response> =>
        fetch(app.url('/revoke'), { method: 'POST', headers: { origin, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: 'not-a-token', client_id: clientA.clientId }).toString() });
      const own = await revoke(APP_A);
      expect({ status: own.status, allowOrigin: own.headers.get('access-control-allow-origin') }).toEqual({ status: 200, allowOrigin: APP_A });
      const other = await revoke(APP_B);
      expect({ status: other.status, allowOrigin: other.headers.get('access-control-allow-origin') }).toEqual({ status: 200, allowOrigin: null });
    });
  });

  describe('no CORS on the pages that use the session cookie, nor on server-side endpoints', () => {
    const PATHS: [string, string][] = [
      ['GET', '/authorize?response_type=code&client_id=x'],
      ['GET', '/login'],
      ['POST', '/login'],
      ['POST', '/consent'],
      ['GET', '/'],
      ['GET', '/account/access'],
      ['GET', '/session/end'],
      ['POST', '/logout'],
      ['POST', '/register'],
      ['POST', '/par'],
      ['POST', '/introspect'],
      ['GET', '/health'],
    ];

    it.each(PATHS)('%s %s: neither the preflight nor the request gets CORS headers', async (method, path) => {
      const pre = await preflight(app, path, APP_A, method);
      expect(pre.status).not.toBe(204);
      expect(corsHeaders(pre)).toEqual({ allowOrigin: null, allowCredentials: null });
      const response = await fetch(app.url(path), { method, redirect: 'manual', headers: { origin: APP_A, ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) }, ...(method === 'POST' ? { body: '' } : {}) });
      await response.arrayBuffer();
      expect(corsHeaders(response)).toEqual({ allowOrigin: null, allowCredentials: null });
      expect(response.headers.get('access-control-expose-headers')).toBeNull();
    });
  });

  describe('which origins: those of the clients registered now', () => {
    it('are read once, not per request: many requests with an Origin cost one read of the clients, requests without one none', async () => {
      const reads = jest.spyOn(app.app.get(ClientStore), 'redirectUrisOfAll');
      try {
        // A change drops what the instance kept: the next request with an Origin reads once.
        await app.createClient({ name: 'Drops the kept origins', redirectUris: ['https://dropped.example.test/callback'], isPublic: true });
        // On PostgreSQL the trigger's notification of that change drops them too, a moment later: let it arrive first.
        await new Promise((resolve) => setTimeout(resolve, 200));
        for (let i = 0; i < 10; i++) await fetch(app.url('/api/v1/notes'), { headers: { authorization: `Bearer ${accessToken}` } }).then((r) => r.arrayBuffer());
        expect(reads).toHaveBeenCalledTimes(0);
        await Promise.all(Array.from({ length: 10 }, (_, i) => preflight(app, '/userinfo', i % 2 === 0 ? APP_A : 'https://evil.example.test', 'GET')));
        for (const origin of [APP_A, APP_B, 'https://evil.example.test', CONFIGURED]) await redeem(clientA, origin);
        expect(reads).toHaveBeenCalledTimes(1);
      } finally {
        reads.mockRestore();
      }
    });

    it('a client registered now allows its origin at once; deleted, no longer', async () => {
      const origin = 'https://new-app.example.test';
      expect((await preflight(app, '/userinfo', origin, 'GET')).headers.get('access-control-allow-origin')).toBeNull();
      const created = await app.createClient({ name: 'New app', redirectUris: [`${origin}/callback`], isPublic: true });
      expect((await preflight(app, '/userinfo', origin, 'GET')).headers.get('access-control-allow-origin')).toBe(origin);
      await app.app.get(ClientsService).delete(created.clientId);
      expect((await preflight(app, '/userinfo', origin, 'GET')).headers.get('access-control-allow-origin')).toBeNull();
    });

    it('a change made outside this instance (SQL, the CLI, another instance) is seen: on PostgreSQL when notified, on SQLite within seconds', async () => {
      const origin = 'https://changed-by-sql.example.test';
      const created = await app.createClient({ name: 'Changed by SQL', redirectUris: ['https://before.example.test/callback'], isPublic: true });
      expect((await preflight(app, '/userinfo', origin, 'GET')).headers.get('access-control-allow-origin')).toBeNull();
      await app.dataSource.createQueryBuilder().update(Client).set({ redirectUris: [`${origin}/callback`] }).where('id = :id', { id: created.clientId }).execute();
      const changed = Date.now();
      const deadline = changed + 8_000;
      let allowOrigin: string | null = null;
      while (allowOrigin === null && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        allowOrigin = (await preflight(app, '/userinfo', origin, 'GET')).headers.get('access-control-allow-origin');
      }
      expect(allowOrigin).toBe(origin);
      // PostgreSQL's trigger told this instance at once; SQLite has no notifications: at most 5 s.
      expect(Date.now() - changed).toBeLessThan(POSTGRES ? 1_000 : 6_000);
    }, 20_000);

    it("a redirect URI with another scheme (a native app's) allows no origin", async () => {
      const response = await preflight(app, '/token', 'com.example.app-b:', 'POST');
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
    });
  });
});
