/**
 * Threat model, CORS (issue 34): the classic misconfigurations of a server that lets browser apps
 * read its answers, each tried against the real app.
 * - Reflecting an arbitrary origin (or a look-alike, or `null`) would let any page read answers
 *   meant for one app: Access-Control-Allow-Origin only ever names an origin that is allowed, by
 *   exact comparison, and `*` only on public documents.
 * - Access-Control-Allow-Credentials would let a page use the person's session cookie: never sent,
 *   on any endpoint, and the cookie pages get no CORS at all.
 * - A page of app A reading the tokens of client B: at /token and /revoke the origin must belong
 *   to the client the request names.
 * - A preflight changes nothing, and one from an unknown origin is refused, so a browser never
 *   sends the request it asked about.
 */
import fc from 'fast-check';
import { corsConfig } from '../../src/config/cors.config.js';
import { ConfigValidationError } from '../../src/config/validate-env.js';
import { obtainCode, postToken } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';
import { withEnv } from '../helpers/with-env.js';
import { fcParameters, fuzzRuns, changedTables, snapshot } from './support/fuzz-harness.js';

const APP_A = 'https://app-a.example.test';
const APP_B = 'https://app-b.example.test:8443';
const ALLOWED = new Set([APP_A, APP_B]);

/** The endpoints with CORS, as a page would call them. */
const CORS_CALLS: [string, string, string][] = [
  ['POST', '/token', 'grant_type=authorization_code&code=x&client_id={A}&redirect_uri=x&code_verifier=x'],
  ['POST', '/revoke', 'token=x&client_id={A}'],
  ['GET', '/userinfo', ''],
  ['GET', '/api/v1/notes', ''],
];
const PUBLIC_PATHS = ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server', '/.well-known/jwks.json'];
const COOKIE_PATHS: [string, string][] = [
  ['GET', '/authorize?client_id=x'],
  ['GET', '/login'],
  ['POST', '/login'],
  ['POST', '/consent'],
  ['GET', '/'],
  ['GET', '/account/access'],
  ['POST', '/logout'],
  ['GET', '/session/end'],
  ['POST', '/register'],
  ['POST', '/par'],
];

/** Origins a test would try by hand: variations of the allowed ones an attacker can register as domains or produce. */
const HOSTILE = [
  'null',
  'https://app-a.example.test.evil.test',
  'https://app-a.example.testevil.test',
  'https://evilapp-a.example.test',
  'https://evil.test#https://app-a.example.test',
  'https://evil.test?https://app-a.example.test',
  'https://app-a.example.test@evil.test',
  'http://app-a.example.test',
  'https://app-a.example.test:444',
  'https://app-b.example.test',
  'https://app-b.example.test:8443/',
  'https://App-A.example.test',
  'https://app-a.example.test ',
  ' https://app-a.example.test',
  'https://app-a.example.test\t',
  'https://app-a.example.test%00',
  'https://xn--app-a-example-test.evil',
  'file://',
  'chrome-extension://abcdefghijklmnop',
  '*',
];

/** Arbitrary origins: well-formed ones of any host, the allowed ones with something appended or prepended, and any string. */
const anyOrigin = fc.oneof(
  fc.webUrl().map((url) => new URL(url).origin),
  fc.tuple(fc.constantFrom(APP_A, APP_B), fc.string({ minLength: 1, maxLength: 12 })).map(([origin, suffix]) => origin + suffix),
  fc.tuple(fc.string({ minLength: 1, maxLength: 12 }), fc.constantFrom(APP_A, APP_B)).map(([prefix, origin]) => prefix + origin),
  fc.string({ maxLength: 40 }),
);

/** Only what a header can carry (fetch refuses CR, LF and NUL). */
const sendable = (origin: string): boolean => !/[\r\n\0]/.test(origin) && origin.trim() === origin && origin !== '';

describe('CORS misconfiguration (issue 34)', () => {
  let app: TestApp;
  let user: TestUser;
  let clientA: RegisteredClient;
  let clientB: RegisteredClient;
  let token: string;

  beforeAll(async () => {
    app = await TestApp.start();
    user = await app.createUser();
    clientA = await app.createClient({ name: 'App A', redirectUris: [`${APP_A}/callback`], isPublic: true });
    clientB = await app.createClient({ name: 'App B', redirectUris: [`${APP_B}/callback`], isPublic: true });
    const { code, pkce } = await obtainCode(app, clientA, user);
    const issued = await postToken(app, { grant_type: 'authorization_code', code, redirect_uri: clientA.redirectUri, code_verifier: pkce.verifier, client_id: clientA.clientId });
    token = issued.body.access_token as string;
  });
  afterAll(async () => app?.stop());

  async function call(method: string, path: string, body: string, origin: string, extra: Record<string, string> = {}): Promise<Response> {
    const response = await fetch(app.url(path), {
      method,
      redirect: 'manual',
      headers: { origin, authorization: `Bearer ${token}`, ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...extra },
      ...(method === 'POST' ? { body: body.replace('{A}', clientA.clientId) } : {}),
    });
    await response.arrayBuffer();
    return response;
  }

  async function preflight(path: string, origin: string, method: string): Promise<Response> {
    const response = await fetch(app.url(path), { method: 'OPTIONS', headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, dpop' } });
    await response.arrayBuffer();
    return response;
  }

  describe('a reflected origin', () => {
    it.each(HOSTILE.filter(sendable).flatMap((origin) => CORS_CALLS.map(([method, path, body]) => [origin, method, path, body] as const)))('%j → %s %s: no Access-Control-Allow-Origin', async (origin, method, path, body) => {
      const response = await call(method, path, body, origin);
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
      expect((await preflight(path, origin, method)).headers.get('access-control-allow-origin')).toBeNull();
    });

    it('for any origin, the answer names that origin only when it is exactly an allowed one, and never *', async () => {
      await fc.assert(
        fc.asyncProperty(anyOrigin.filter(sendable), fc.constantFrom(...CORS_CALLS), async (origin, [method, path, body]) => {
          for (const response of [await call(method, path, body, origin), await preflight(path, origin, method)]) {
            const allowOrigin = response.headers.get('access-control-allow-origin');
            if (allowOrigin !== null) {
              expect(allowOrigin).toBe(origin);
              expect(ALLOWED.has(origin)).toBe(true);
            }
          }
        }),
        fcParameters(fuzzRuns(150), [[APP_A + '.evil.test', CORS_CALLS[2]]]),
      );
    });

    it.each([
      ['*', 'a wildcard'],
      ['null', 'the opaque origin'],
      ['https://app.example.test/', 'a trailing slash'],
      ['https://app.example.test/path', 'a path'],
      ['https://*.example.test', 'a wildcard host'],
      ['HTTPS://APP.EXAMPLE.TEST', 'upper case'],
      ['https://app.example.test:443', 'the default port'],
      ['app.example.test', 'no scheme'],
      ['ftp://app.example.test', 'another scheme'],
    ])('CORS_ALLOWED_ORIGINS=%j (%s) stops start-up with a message naming the setting', async (value) => {
      const outcome = await withEnv({ CORS_ALLOWED_ORIGINS: `https://ok.example.test,${value}` }, async () => {
        try {
          corsConfig();
          return undefined;
        } catch (error) {
          return error;
        }
      });
      expect(outcome).toBeInstanceOf(ConfigValidationError);
      expect((outcome as Error).message).toContain('CORS_ALLOWED_ORIGINS');
      expect((outcome as Error).message).toContain(JSON.stringify(value));
    });
  });

  describe('credentials', () => {
    const EVERYWHERE: [string, string, string][] = [...CORS_CALLS, ...PUBLIC_PATHS.map((path): [string, string, string] => ['GET', path, '']), ...COOKIE_PATHS.map(([method, path]): [string, string, string] => [method, path, ''])];

    it.each(EVERYWHERE)('%s %s: never Access-Control-Allow-Credentials, also with a cookie from an allowed origin', async (method, path, body) => {
      const response = await call(method, path, body, APP_A, { cookie: 'latchkey_session=whatever' });
      expect(response.headers.get('access-control-allow-credentials')).toBeNull();
      expect((await preflight(path.split('?')[0], APP_A, method)).headers.get('access-control-allow-credentials')).toBeNull();
    });

    it.each(COOKIE_PATHS)('%s %s (a cookie or server-side endpoint): no CORS header at all, even for an allowed origin', async (method, path) => {
      const response = await call(method, path, '', APP_A);
      const pre = await preflight(path.split('?')[0], APP_A, method);
      for (const answer of [response, pre]) {
        expect([...answer.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
      }
    });
  });

  describe("a page of app A and client B's tokens", () => {
    it("A's page redeeming B's code gets no Access-Control-Allow-Origin: the browser keeps B's tokens from it", async () => {
      const { code, pkce } = await obtainCode(app, clientB, user);
      const result = await postToken(app, { grant_type: 'authorization_code', code, redirect_uri: clientB.redirectUri, code_verifier: pkce.verifier, client_id: clientB.clientId }, { origin: APP_A });
      expect(result.status).toBe(200);
      expect(result.headers.get('access-control-allow-origin')).toBeNull();
      expect(result.headers.get('access-control-allow-credentials')).toBeNull();
      // B's own page would have been allowed to read it.
      const own = await obtainCode(app, clientB, user);
      const ownResult = await postToken(app, { grant_type: 'authorization_code', code: own.code, redirect_uri: clientB.redirectUri, code_verifier: own.pkce.verifier, client_id: clientB.clientId }, { origin: APP_B });
      expect(ownResult.headers.get('access-control-allow-origin')).toBe(APP_B);
    });

    it("A's page cannot redeem B's code by naming its own client: invalid_grant, nothing issued", async () => {
      const { code, pkce } = await obtainCode(app, clientB, user);
      // The form names A, the code is B's: refused, and readable by A's page only as A's error.
      const result = await postToken(app, { grant_type: 'authorization_code', code, redirect_uri: clientB.redirectUri, code_verifier: pkce.verifier, client_id: clientA.clientId }, { origin: APP_A });
      expect(result.status).toBe(400);
      expect(result.body.access_token).toBeUndefined();
    });

    it("an unknown origin's preflight to /token is refused and changes nothing, so a browser never sends the code; the code still works", async () => {
      const { code, pkce } = await obtainCode(app, clientB, user);
      const before = await snapshot(app.dataSource);
      const refused = await preflight('/token', 'https://evil.example.test', 'POST');
      expect(refused.status).not.toBe(204);
      expect(refused.headers.get('access-control-allow-origin')).toBeNull();
      const allowed = await preflight('/token', APP_B, 'POST');
      expect(allowed.status).toBe(204);
      expect(changedTables(before, await snapshot(app.dataSource))).toEqual([]);
      const result = await postToken(app, { grant_type: 'authorization_code', code, redirect_uri: clientB.redirectUri, code_verifier: pkce.verifier, client_id: clientB.clientId }, { origin: APP_B });
      expect(result.status).toBe(200);
    });
  });
});
