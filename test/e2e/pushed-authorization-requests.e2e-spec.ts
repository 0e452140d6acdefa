/**
 * Pushed Authorization Requests (RFC 9126): POST /par for authenticated clients, a request_uri that
 * expires within 60 s and yields one authorization response, /authorize using only the pushed
 * parameters, and clients (or the whole server) that accept nothing else.
 */
import { jest } from '@jest/globals';
import { PurgeService } from '../../src/housekeeping/purge.service.js';
import { Browser, isLoginPage } from '../helpers/browser.js';
import { authorizeAsUser, authorizeUrl, basicAuth, newPkce, redirectParams, tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type RegisteredClientWithMethod, type TestUser } from '../helpers/test-app.js';

const REQUEST_URI = /^urn:ietf:params:oauth:request_uri:lk_par_[A-Za-z0-9_-]{43}$/;

interface ParResult {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/** POST /par with the form as given and the client's Basic credentials unless `headers` replace them. */
async function push(app: TestApp, client: RegisteredClient, form: Record<string, string>, headers?: Record<string, string>): Promise<ParResult> {
  const auth = headers ?? (client.clientSecret ? { authorization: basicAuth(client.clientId, client.clientSecret) } : {});
  const response = await fetch(app.url('/par'), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...auth },
    body: new URLSearchParams(form).toString(),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

const pushedCount = async (app: TestApp): Promise<number> => Number((await app.dataSource.query<{ n: number }[]>('SELECT COUNT(*) AS "n" FROM "pushed_authorization_requests"'))[0].n);

describe('Pushed Authorization Requests (RFC 9126)', () => {
  let app: TestApp;
  let alice: TestUser;
  let client: RegisteredClientWithMethod;

  /** The authorization request a client would otherwise send in the browser's URL. */
  const requestOf = (target: RegisteredClient, extra: Record<string, string> = {}) => {
    const pkce = newPkce();
    return { pkce, form: { response_type: 'code', redirect_uri: target.redirectUri, scope: 'notes:read', state: 'st', code_challenge: pkce.challenge, code_challenge_method: 'S256', ...extra } };
  };
  const authorizeWith = (target: RegisteredClient, requestUri: string, extra: Record<string, string> = {}) =>
    `/authorize?${new URLSearchParams({ client_id: target.clientId, request_uri: requestUri, ...extra })}`;

  beforeAll(async () => {
    app = await TestApp.start();
    alice = await app.createUser('alice-par');
    client = await app.createClient({ scope: 'notes:read notes:write' });
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(async () => app?.stop());

  describe('POST /par', () => {
    it('answers 201 with a request_uri that expires in 60 s, never cached, and stores only the hash of its reference', async () => {
      const { form } = requestOf(client);
      const result = await push(app, client, form);
      expect(result.status).toBe(201);
      expect(result.body).toEqual({ request_uri: expect.stringMatching(REQUEST_URI), expires_in: 60 });
      expect(result.headers.get('cache-control')).toBe('no-store');
      expect(result.headers.get('content-type')).toMatch(/^application\/json/);
      const reference = (result.body.request_uri as string).split(':').pop()!;
      const rows = await app.dataSource.query<Record<string, string>[]>('SELECT * FROM "pushed_authorization_requests"');
      expect(JSON.stringify(rows)).not.toContain(reference);
    });

    it('authenticates the client as the token endpoint does: no credentials, a wrong secret or another client_id is 401 and stores nothing', async () => {
      const other = await app.createClient();
      const { form } = requestOf(client);
      const before = await pushedCount(app);
      const attempts: [Record<string, string>, Record<string, string>][] = [
        [{ ...form, client_id: client.clientId }, {}],
        [form, { authorization: basicAuth(client.clientId, 'lk_cs_wrong') }],
        [{ ...form, client_id: other.clientId }, { authorization: basicAuth(client.clientId, client.clientSecret!) }],
        [{ ...form, client_id: client.clientId, client_secret: client.clientSecret! }, {}],
      ];
      for (const [body, headers] of attempts) {
        const result = await push(app, client, body, headers);
        expect(result.status).toBe(401);
        expect(result.body.error).toBe('invalid_client');
      }
      expect(await pushedCount(app)).toBe(before);
    });

    it.each([
      ['an unregistered redirect_uri', { redirect_uri: 'https://evil.example/cb' }, 'invalid_request'],
      ['a scope the client may not ask for', { scope: 'photos:read' }, 'invalid_scope'],
      ['no response_type', { response_type: '' }, 'invalid_request'],
      ['the plain PKCE method', { code_challenge_method: 'plain' }, 'invalid_request'],
      ['a request_uri (RFC 9126 §2.1)', { request_uri: 'urn:ietf:params:oauth:request_uri:lk_par_x' }, 'invalid_request'],
      ['a request object (Core §6.1)', { request: 'eyJhbGciOiJub25lIn0.e30.' }, 'request_not_supported'],
      ['prompt=none with another value', { prompt: 'none login' }, 'invalid_request'],
    ])('checks the request as /authorize would: %s is 400 %s as JSON, and nothing is stored', async (_what, change, error) => {
      const { form } = requestOf(client);
      const before = await pushedCount(app);
      const result = await push(app, client, { ...form, ...change });
      expect(result.status).toBe(400);
      expect(result.body).toEqual({ error, error_description: expect.any(String) });
      expect(await pushedCount(app)).toBe(before);
    });

    it('an empty request_uri or request is no parameter at all (RFC 6749 §3.1): the push is accepted', async () => {
      const { form } = requestOf(client);
      const result = await push(app, client, { ...form, request_uri: '', request: '' });
      expect(result.status).toBe(201);
      expect(result.body.request_uri).toMatch(REQUEST_URI);
    });

    it('is a POST endpoint with a form body: JSON is refused with 400', async () => {
      const response = await fetch(app.url('/par'), { method: 'POST', headers: { authorization: basicAuth(client.clientId, client.clientSecret!), 'content-type': 'application/json' }, body: '{}' });
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      expect(((await response.json()) as { error: string }).error).toEqual(expect.any(String));
    });
  });

  describe('GET /authorize with a request_uri', () => {
    it('completes the flow with the pushed parameters only: the query cannot widen the scope nor move the redirect', async () => {
      const { form, pkce } = requestOf(client, { state: 'pushed-state' });
      const { body } = await push(app, client, form);
      const page = await authorizeAsUser(
        new Browser(app.baseUrl),
        alice,
        authorizeWith(client, body.request_uri as string, { scope: 'notes:read notes:write', redirect_uri: 'https://evil.example/cb', state: 'query-state' }),
      );
      expect(page.status).toBe(303);
      expect(page.location!.startsWith(`${client.redirectUri}?`)).toBe(true);
      const params = redirectParams(page);
      expect(params.get('state')).toBe('pushed-state');
      const tokens = await tokenRequest(app, client, { grant_type: 'authorization_code', code: params.get('code')!, redirect_uri: client.redirectUri, code_verifier: pkce.verifier });
      expect(tokens.status).toBe(200);
      expect(tokens.body.scope).toBe('notes:read');
    });

    it('yields one code: the same request_uri again is invalid_request_uri, and of two racing approvals exactly one gets a code', async () => {
      const browser = new Browser(app.baseUrl);
      const { form } = requestOf(client);
      const first = await push(app, client, form);
      const page = await authorizeAsUser(browser, alice, authorizeWith(client, first.body.request_uri as string));
      expect(redirectParams(page).get('code')).toBeTruthy();
      const again = await browser.get(authorizeWith(client, first.body.request_uri as string));
      expect(again.status).toBe(400);
      expect(again.body).toContain('invalid_request_uri');
      expect(again.location).toBeUndefined();

      // Signed in, consent given: each GET goes straight to the code; two at once race for the one use.
      const second = await push(app, client, requestOf(client).form);
      const codesBefore = Number((await app.dataSource.query<{ n: number }[]>('SELECT COUNT(*) AS "n" FROM "authorization_codes"'))[0].n);
      const pages = await Promise.all([browser.get(authorizeWith(client, second.body.request_uri as string)), browser.get(authorizeWith(client, second.body.request_uri as string))]);
      expect(pages.map((p) => p.status).sort()).toEqual([302, 400]);
      const codesAfter = Number((await app.dataSource.query<{ n: number }[]>('SELECT COUNT(*) AS "n" FROM "authorization_codes"'))[0].n);
      expect(codesAfter - codesBefore).toBe(1);
    });

    it('refuses a request_uri of another client, an unknown one and a malformed one, without redirecting, and leaves the pushed request usable', async () => {
      const other = await app.createClient();
      const { form } = requestOf(client);
      const { body } = await push(app, client, form);
      const browser = new Browser(app.baseUrl);
      for (const url of [
        authorizeWith(other, body.request_uri as string),
        authorizeWith(client, 'urn:ietf:params:oauth:request_uri:lk_par_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'),
      ]) {
        const page = await browser.get(url);
        expect(page.status).toBe(400);
        expect(page.body).toContain('invalid_request_uri');
        expect(page.location).toBeUndefined();
      }
      // A URL is no pushed request but a request object to fetch (Core §6.2), which is not supported:
      // said to the client at its registered redirect URI, and nothing is fetched.
      const byReference = await browser.get(authorizeWith(client, 'https://attacker.example/request.jwt'));
      expect(new URL(byReference.location!).origin + new URL(byReference.location!).pathname).toBe(client.redirectUri);
      expect(redirectParams(byReference).get('error')).toBe('request_uri_not_supported');
      const rows = await app.dataSource.query<{ opened_at: unknown; used_at: unknown }[]>(`SELECT "opened_at", "used_at" FROM "pushed_authorization_requests" WHERE "client_id" = '${client.clientId}' ORDER BY "created_at" DESC, "id" DESC`);
      expect(rows[0]).toEqual({ opened_at: null, used_at: null });
      expect(redirectParams(await authorizeAsUser(browser, alice, authorizeWith(client, body.request_uri as string))).get('code')).toBeTruthy();
    });

    it('expires 60 s after the push when no browser brought it; once opened, the person has the sign-in window', async () => {
      const pushedAt = Date.now();
      const stale = await push(app, client, requestOf(client).form);
      const fresh = await push(app, client, requestOf(client).form);
      jest.spyOn(app.clock, 'now').mockReturnValue(new Date(pushedAt + 61_000));
      const expired = await new Browser(app.baseUrl).get(authorizeWith(client, stale.body.request_uri as string));
      expect(expired.status).toBe(400);
      expect(expired.body).toContain('invalid_request_uri');

      // Opened at 59 s (the sign-in page), signed in five minutes later: still one valid request.
      jest.spyOn(app.clock, 'now').mockReturnValue(new Date(pushedAt + 59_000));
      const browser = new Browser(app.baseUrl);
      const login = await browser.get(authorizeWith(client, fresh.body.request_uri as string));
      expect(isLoginPage(login)).toBe(true);
      jest.spyOn(app.clock, 'now').mockReturnValue(new Date(pushedAt + 359_000));
      const page = await authorizeAsUser(browser, alice, authorizeWith(client, fresh.body.request_uri as string));
      expect(redirectParams(page).get('code')).toBeTruthy();
    });

    it('the purge removes expired pushed requests, used or not', async () => {
      await push(app, client, requestOf(client).form);
      jest.spyOn(app.clock, 'now').mockReturnValue(new Date(Date.now() + 24 * 3600 * 1000));
      const { pushedRequests } = await app.app.get(PurgeService).purge();
      expect(pushedRequests).toBeGreaterThan(0);
      expect(await pushedCount(app)).toBe(0);
    });
  });

  describe('clients that require pushed requests (RFC 9126 §5)', () => {
    it('refuses a plain authorization request (error to the verified redirect URI) and accepts the pushed one', async () => {
      const strict = await app.createClient({ openId: { require_pushed_authorization_requests: true } });
      const pkce = newPkce();
      const plain = await new Browser(app.baseUrl).get(authorizeUrl(strict, { scope: 'notes:read', state: 'p', code_challenge: pkce.challenge, code_challenge_method: 'S256' }));
      expect(plain.status).toBe(302);
      expect(redirectParams(plain).get('error')).toBe('invalid_request');
      expect(redirectParams(plain).get('code')).toBeNull();
      const { body } = await push(app, strict, requestOf(strict).form);
      expect(redirectParams(await authorizeAsUser(new Browser(app.baseUrl), alice, authorizeWith(strict, body.request_uri as string))).get('code')).toBeTruthy();
    });

    it('registration reads require_pushed_authorization_requests back; a client managing itself may turn it on but not off, and nothing changes when refused', async () => {
      const admin = await app.createClient({ name: 'admin', redirectUris: [], grantTypes: ['client_credentials'] as never, scope: 'clients:register' });
      const adminToken = (await tokenRequest(app, admin, { grant_type: 'client_credentials' })).body.access_token as string;
      const registered = await fetch(app.url('/register'), {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'RP', redirect_uris: ['https://rp.example/cb'] }),
      });
      const json = (await registered.json()) as Record<string, string>;
      expect(json.require_pushed_authorization_requests ?? false).toBe(false);
      const path = new URL(json.registration_client_uri).pathname;
      const update = (require: boolean) =>
        fetch(app.url(path), {
          method: 'PUT',
          headers: { authorization: `Bearer ${json.registration_access_token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ client_id: json.client_id, client_name: 'RP', redirect_uris: ['https://rp.example/cb'], require_pushed_authorization_requests: require }),
        });
      const on = await update(true);
      expect(on.status).toBe(200);
      expect(((await on.json()) as Record<string, unknown>).require_pushed_authorization_requests).toBe(true);
      const settingsOf = async () => (await app.dataSource.query<{ openid_settings: string }[]>(`SELECT "openid_settings" FROM "clients" WHERE "id" = '${json.client_id}'`))[0].openid_settings;
      const before = await settingsOf();
      const off = await update(false);
      expect(off.status).toBe(400);
      expect(await off.json()).toEqual(expect.objectContaining({ error: 'invalid_client_metadata', error_description: expect.stringMatching(/^require_pushed_authorization_requests .*only an administrator/) }));
      expect(await settingsOf()).toBe(before);
    });
  });
});

describe('PAR_REQUIRED=true: every client must push', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await TestApp.start({ PAR_REQUIRED: 'true' });
  });
  afterAll(async () => {
    await app?.stop();
    delete process.env.PAR_REQUIRED;
  });

  it('says so in both metadata documents, refuses plain requests and accepts pushed ones', async () => {
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const metadata = (await (await fetch(app.url(path))).json()) as Record<string, unknown>;
      expect(metadata).toEqual(expect.objectContaining({ pushed_authorization_request_endpoint: app.url('/par').replace(app.baseUrl, metadata.issuer as string), require_pushed_authorization_requests: true }));
    }
    const client = await app.createClient();
    const alice = await app.createUser();
    const pkce = newPkce();
    const form = { response_type: 'code', redirect_uri: client.redirectUri, scope: 'notes:read', state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256' };
    const plain = await new Browser(app.baseUrl).get(authorizeUrl(client, form));
    expect(redirectParams(plain).get('error')).toBe('invalid_request');
    const { body } = await push(app, client, form);
    const page = await authorizeAsUser(new Browser(app.baseUrl), alice, `/authorize?${new URLSearchParams({ client_id: client.clientId, request_uri: body.request_uri as string })}`);
    const tokens = await tokenRequest(app, client, { grant_type: 'authorization_code', code: redirectParams(page).get('code')!, redirect_uri: client.redirectUri, code_verifier: pkce.verifier });
    expect(tokens.status).toBe(200);
  });
});
