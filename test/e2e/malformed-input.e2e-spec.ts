import { connect } from 'node:net';
import { AuthorizationCode } from '../../src/codes/authorization-code.entity.js';
import { Token } from '../../src/tokens/token.entity.js';
import { Browser } from '../helpers/browser.js';
import { authorizeUrl, basicAuth, obtainCode, type Pkce } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';

const FORM = 'application/x-www-form-urlencoded';
const JSON_TYPE = /^application\/json;\s*charset=utf-8$/i;
const BODY_LIMIT = 64 * 1024;

interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json: Record<string, unknown> | undefined;
}

/** A request with exactly this body and these headers (a Uint8Array body gets no automatic Content-Type). */
async function send(app: TestApp, method: string, path: string, body?: string | Uint8Array, headers: Record<string, string> = {}): Promise<Reply> {
  const response = await fetch(app.url(path), { method, headers, body: body instanceof Uint8Array ? new Uint8Array(body) : body, redirect: 'manual' });
  const text = await response.text();
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

function expectJsonError(reply: Reply, status: number, error: string | RegExp): void {
  expect({ status: reply.status, json: reply.json }).toEqual({
    status,
    json: { error: typeof error === 'string' ? error : expect.stringMatching(error), error_description: expect.any(String) },
  });
  expect(reply.headers.get('content-type')).toMatch(JSON_TYPE);
}

describe('malformed input never gets a 5xx, and writes nothing', () => {
  let app: TestApp;
  let client: RegisteredClient;
  let user: TestUser;
  /** A valid, unredeemed code: every malformed request below carries it where it can, and none may spend it. */
  let code: string;
  let pkce: Pkce;
  let before: { tokens: number; codes: number };

  const counts = async () => ({
    tokens: await app.dataSource.getRepository(Token).count(),
    codes: await app.dataSource.getRepository(AuthorizationCode).count(),
  });
  const basic = () => ({ authorization: basicAuth(client.clientId, client.clientSecret!) });
  const validForm = () => new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier }).toString();

  beforeAll(async () => {
    app = await TestApp.start();
    client = await app.createClient();
    user = await app.createUser();
    ({ code, pkce } = await obtainCode(app, client, user));
    before = await counts();
  });
  afterAll(async () => app?.stop());

  describe('POST /token', () => {
    const contentTypes: Array<[string, () => { body: string | Uint8Array; headers: Record<string, string> }]> = [
      ['a JSON body', () => ({ body: JSON.stringify(Object.fromEntries(new URLSearchParams(validForm()))), headers: { 'content-type': 'application/json' } })],
      ['malformed JSON', () => ({ body: '{"grant_type": "authorization_code", ', headers: { 'content-type': 'application/json' } })],
      ['a form body labelled text/plain', () => ({ body: validForm(), headers: { 'content-type': 'text/plain' } })],
      ['a form body with no Content-Type', () => ({ body: new TextEncoder().encode(validForm()), headers: {} })],
      ['multipart/form-data', () => ({ body: `--b\r\nContent-Disposition: form-data; name="grant_type"\r\n\r\nauthorization_code\r\n--b--\r\n`, headers: { 'content-type': 'multipart/form-data; boundary=b' } })],
      ['a look-alike media type', () => ({ body: validForm(), headers: { 'content-type': 'application/x-www-form-urlencodedx' } })],
    ];
    it.each(contentTypes)('answers %s with 400 invalid_request', async (_name, request) => {
      const { body, headers } = request();
      expectJsonError(await send(app, 'POST', '/token', body, { ...basic(), ...headers }), 400, 'invalid_request');
    });

    it('answers an unparseable Content-Type with 400 or 415 invalid_request', async () => {
      const reply = await send(app, 'POST', '/token', validForm(), { ...basic(), 'content-type': ';;;' });
      expect([400, 415]).toContain(reply.status);
      expectJsonError(reply, reply.status, 'invalid_request');
    });

    const forms: Array<[string, string | RegExp, () => string]> = [
      ['an empty body', 'invalid_request', () => ''],
      ['a repeated code', 'invalid_request', () => `${validForm()}&code=${encodeURIComponent(code)}`],
      ['a repeated grant_type', 'invalid_request', () => `${validForm()}&grant_type=authorization_code`],
      ['a repeated redirect_uri', 'invalid_request', () => `${validForm()}&redirect_uri=${encodeURIComponent(client.redirectUri)}`],
      ['a repeated code_verifier', 'invalid_request', () => `${validForm()}&code_verifier=${pkce.verifier}`],
      ['a repeated client_id', 'invalid_request', () => `${validForm()}&client_id=${client.clientId}&client_id=${client.clientId}`],
      ['a code of invalid UTF-8 (%FF%FE)', /^invalid_(request|grant)$/, () => 'grant_type=authorization_code&code=%FF%FE'],
      ['a grant_type of invalid UTF-8', /^(invalid_request|unsupported_grant_type)$/, () => 'grant_type=%FF%FE&code=x'],
      ['a truncated percent-escape', /^invalid_(request|grant)$/, () => 'grant_type=authorization_code&code=%E0%A4%A'],
      ['a bare percent sign', /^invalid_(request|grant)$/, () => 'grant_type=authorization_code&code=%'],
      ['a NUL in the code', /^invalid_(request|grant)$/, () => 'grant_type=authorization_code&code=lk_ac_%00'],
      ['a 5000-character code', /^invalid_(request|grant)$/, () => `grant_type=authorization_code&code=${'A'.repeat(5000)}`],
      ['prototype-polluting names', 'invalid_request', () => '__proto__=x&constructor=y&__proto__[polluted]=1&hasOwnProperty=1&grant_type=authorization_code'],
      ['parameters without values or names', 'invalid_request', () => '&&=&grant_type&=x&code'],
    ];
    it.each(forms)('answers %s with 400 %s', async (_name, error, body) => {
      expectJsonError(await send(app, 'POST', '/token', body(), { ...basic(), 'content-type': FORM }), 400, error);
    });

    it.each([
      ['a repeated client_secret', 400, 'invalid_request', () => `${validForm()}&client_id=${client.clientId}&client_secret=${client.clientSecret}&client_secret=${client.clientSecret}`],
      ['a client_id with a NUL', 401, 'invalid_client', () => `${validForm()}&client_id=%00${client.clientId}&client_secret=x`],
      ['a client_id of invalid UTF-8', 401, 'invalid_client', () => `${validForm()}&client_id=%FF%FE&client_secret=x`],
      ['an empty body and no authentication', 401, 'invalid_client', () => ''],
    ] as Array<[string, number, string, () => string]>)('answers %s (client_secret_post) with %i %s', async (_name, status, error, body) => {
      expectJsonError(await send(app, 'POST', '/token', body(), { 'content-type': FORM }), status, error);
    });

    it('answers an empty body with no Content-Type with 400 invalid_request', async () => {
      expectJsonError(await send(app, 'POST', '/token', new Uint8Array(0), basic()), 400, 'invalid_request');
    });

    it.each([
      ['a form body', FORM],
      ['a JSON body', 'application/json'],
      ['a body of unknown type', 'application/octet-stream'],
    ])('answers %s over 64 KiB with 413 and a JSON error', async (_name, type) => {
      const body = `${validForm()}&padding=${'a'.repeat(BODY_LIMIT)}`;
      const reply = await send(app, 'POST', '/token', body, { ...basic(), 'content-type': type });
      expect(reply.status).toBe(413);
      expect(reply.headers.get('content-type')).toMatch(JSON_TYPE);
      expect(reply.json).toEqual({ error: expect.stringMatching(/^[a-z_]+$/), error_description: expect.any(String) });
    });

    it('answers GET /token with 405 and Allow: POST', async () => {
      const reply = await send(app, 'GET', '/token');
      expectJsonError(reply, 405, /^[a-z_]+$/);
      expect(reply.headers.get('allow')).toBe('POST');
    });

    it.each(['PUT', 'DELETE', 'PATCH'])('answers %s /token with 405 and Allow: POST', async (method) => {
      const reply = await send(app, method, '/token', validForm(), { ...basic(), 'content-type': FORM });
      expect(reply.status).toBe(405);
      expect(reply.headers.get('allow')).toBe('POST');
    });
  });

  describe('unknown paths', () => {
    it.each([
      ['GET', '/no-such-endpoint'],
      ['POST', '/no-such-endpoint'],
      ['GET', '/token/extra'],
      ['GET', '/.well-known/no-such-document'],
    ])('%s %s answers 404 with a JSON {error}', async (method, path) => {
      const reply = await send(app, method, path, method === 'POST' ? 'a=b' : undefined, method === 'POST' ? { 'content-type': FORM } : {});
      expectJsonError(reply, 404, /^[a-z_]+$/);
    });
  });

  it('answers a path of invalid UTF-8 with 400 and the same JSON error shape as every other error', async () => {
    expectJsonError(await send(app, 'GET', '/%FF%FE'), 400, 'invalid_request');
  });

  describe('requests the HTTP parser refuses, before any route', () => {
    /** Writes raw bytes on a fresh connection and reads until the server closes it. */
    function rawExchange(bytes: Buffer): Promise<string> {
      const { port } = new URL(app.baseUrl);
      return new Promise((resolve, reject) => {
        const chunks: Buffer[] = [];
        const socket = connect(Number(port), '127.0.0.1', () => socket.end(bytes));
        socket.on('data', (chunk: Buffer) => chunks.push(chunk));
        socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
        socket.on('error', reject);
      });
    }

    it.each<[string, Buffer, number, string]>([
      ['raw non-ASCII bytes in the request line', Buffer.concat([Buffer.from('GET /api/v1/notes/'), Buffer.from([0xff, 0xfe]), Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n')]), 400, 'invalid_request'],
      ['a malformed request line', Buffer.from('NOT HTTP AT ALL\r\n\r\n'), 400, 'invalid_request'],
      ['headers over the size limit', Buffer.from(`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`), 431, 'request_header_fields_too_large'],
    ])('%s answers %d with a JSON {error} in the same shape as every other error', async (_case, bytes, status, code) => {
      const response = await rawExchange(bytes);
      const [head, body] = response.split('\r\n\r\n');
      expect(head.split('\r\n')[0]).toBe(`HTTP/1.1 ${status} ${status === 400 ? 'Bad Request' : 'Request Header Fields Too Large'}`);
      expect(head).toMatch(/\r\ncontent-type: application\/json;charset=UTF-8\r\n/i);
      expect(JSON.parse(body)).toEqual({ error: code, error_description: expect.any(String) });
    });
  });

  describe('GET /authorize', () => {
    const pageUrl = (params: Record<string, string | undefined> = {}) => authorizeUrl(client, { scope: 'notes:read', state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256', ...params });

    it.each([
      ['a client_id of invalid UTF-8', () => `/authorize?response_type=code&client_id=%FF%FE&redirect_uri=${encodeURIComponent(client.redirectUri)}`],
      ['a client_id with a NUL', () => `/authorize?response_type=code&client_id=%00${client.clientId}&redirect_uri=${encodeURIComponent(client.redirectUri)}`],
      ['a redirect_uri of invalid UTF-8', () => `/authorize?response_type=code&client_id=${client.clientId}&redirect_uri=%FF%FE`],
      ['a redirect_uri with a truncated escape', () => `/authorize?response_type=code&client_id=${client.clientId}&redirect_uri=http%3A%2F%2Flocalhost%3A8080%2Fcallback%E0%A4%A`],
    ])('shows an error page (400, no redirect) for %s', async (_name, url) => {
      const reply = await send(app, 'GET', url());
      expect(reply.status).toBe(400);
      expect(reply.headers.get('location')).toBeNull();
      expect(reply.headers.get('content-type')).toMatch(/^text\/html/);
    });

    it.each([
      ['a state of invalid UTF-8', '&state=%FF%FE'],
      ['a scope of invalid UTF-8', '&scope=%FF%FE'],
      ['a bare percent sign', '&state=%'],
      ['an unknown parameter of invalid UTF-8', '&x%FF=%FE'],
    ])('answers %s without a 5xx', async (_name, extra) => {
      const { scope: _s, state: _t, ...rest } = Object.fromEntries(new URLSearchParams(pageUrl().split('?')[1]));
      const reply = await send(app, 'GET', `/authorize?${new URLSearchParams(rest).toString()}${extra}`);
      expect(reply.status).toBeLessThan(500);
      expect([200, 302, 400]).toContain(reply.status);
      // Anything redirected goes only to the registered redirect URI.
      if (reply.status === 302) expect(reply.headers.get('location')!.startsWith(`${client.redirectUri}?`)).toBe(true);
    });

    it('treats garbage and tampered session cookies as no session: the login page', async () => {
      const browser = new Browser(app.baseUrl);
      const fresh = await browser.get(pageUrl());
      const real = fresh.headers.getSetCookie().find((c) => c.startsWith('latchkey_session='))?.split(';')[0].slice('latchkey_session='.length);
      expect(real).toBeDefined();
      const tampered = real!.slice(0, 10) + (real![10] === 'A' ? 'B' : 'A') + real!.slice(11);
      const cookies = [
        'latchkey_session=garbage',
        `latchkey_session=${tampered}`,
        `latchkey_session=${'A'.repeat(4000)}`,
        'latchkey_session=%FF%FE',
        'latchkey_session=;;;=;a',
        'latchkey_session=x; latchkey_session=y',
        'latchkey_session',
        '=; ==; a=b=c',
      ];
      for (const cookie of cookies) {
        const reply = await send(app, 'GET', pageUrl(), undefined, { cookie });
        expect({ cookie, status: reply.status }).toEqual({ cookie, status: 200 });
        expect(reply.text).toContain('action="/login"');
      }
    });
  });

  describe('afterwards', () => {
    it('wrote no tokens and no codes for any failed request', async () => {
      expect(await counts()).toEqual(before);
    });

    it('still serves a normal token request, redeeming the code no malformed request could spend', async () => {
      const reply = await send(app, 'POST', '/token', validForm(), { ...basic(), 'content-type': `${FORM}; charset=UTF-8` });
      expect(reply.status).toBe(200);
      expect(reply.json).toMatchObject({ token_type: 'bearer', access_token: expect.stringMatching(/^lk_at_/), refresh_token: expect.stringMatching(/^lk_rt_/) });
      expect(await counts()).toEqual({ tokens: before.tokens + 2, codes: before.codes });
    });
  });
});
