/**
 * Threat model, leaking codes and tokens (issue 7): through the Referer header, through caches,
 * through URLs (browser history, server logs, Location headers), or through an authorization
 * response that carries more than a code.
 */
import { Browser, type Page } from '../helpers/browser.js';
import { basicAuth, newPkce, obtainCode, tokenRequest, authorizeAsUser, authorizeUrl, redirectParams } from '../helpers/oauth-flow.js';
import { obtainTokens } from '../helpers/api-client.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';

const SECRET_PREFIXES = /lk_(at|rt|cs|rat)_/;

describe('token leakage', () => {
  let app: TestApp;
  let client: RegisteredClient;
  let admin: RegisteredClient;
  let resourceServer: RegisteredClient;
  let user: TestUser;

  beforeAll(async () => {
    app = await TestApp.start();
    client = await app.createClient({ name: 'Client', redirectUris: ['https://client.example/cb'], scope: 'notes:read notes:write' });
    admin = await app.createClient({ name: 'Admin', redirectUris: [], grantTypes: ['client_credentials'], scope: 'clients:register' });
    resourceServer = await app.createClient({ name: 'RS', redirectUris: [], grantTypes: ['client_credentials'], scope: 'tokens:introspect' });
    user = await app.createUser();
  });
  afterAll(async () => app?.stop());

  function url(params: Record<string, string | undefined> = {}): string {
    return authorizeUrl(client, { scope: 'notes:read', state: 's', code_challenge: newPkce().challenge, code_challenge_method: 'S256', ...params });
  }

  async function clientCredentialsToken(c: RegisteredClient): Promise<string> {
    const result = await tokenRequest(app, c, { grant_type: 'client_credentials' });
    expect(result.status).toBe(200);
    return result.body.access_token as string;
  }

  describe('RFC 9700 §4.2, RFC 6819 §4.4.1.3: no Referer from the pages', () => {
    const pages: [string, () => Promise<Page>][] = [
      ['the login page', () => new Browser(app.baseUrl).get(url())],
      [
        'the consent page',
        async () => {
          const person = await app.createUser();
          const browser = new Browser(app.baseUrl);
          const login = await browser.get(url());
          const afterLogin = await browser.submit(login, '/login', { username: person.username, password: person.password });
          return browser.get(afterLogin.location!);
        },
      ],
      ['the error page', () => new Browser(app.baseUrl).get(url({ redirect_uri: 'https://evil.example/cb' }))],
      ['the home page', () => new Browser(app.baseUrl).get('/')],
    ];
    it.each(pages)('%s: Referrer-Policy: no-referrer, in the header and in the document', async (_, open) => {
      const page = await open();
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.headers.get('referrer-policy')).toBe('no-referrer');
      expect(page.body).toContain('<meta name="referrer" content="no-referrer">');
    });

    it('the redirect that carries the code: Referrer-Policy: no-referrer', async () => {
      const page = await authorizeAsUser(new Browser(app.baseUrl), user, url());
      expect(redirectParams(page).get('code')).toMatch(/^lk_ac_/);
      expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    });
  });

  describe('RFC 9700 §4.3, §2.1.2 / RFC 6749 §4.1.2: the authorization response carries a code, never a token', () => {
    it('the success redirect has exactly code, state and iss in its query, no fragment and no body', async () => {
      const page = await authorizeAsUser(new Browser(app.baseUrl), user, url());
      const location = new URL(page.location!);
      expect([...location.searchParams.keys()].sort()).toEqual(['code', 'iss', 'state']);
      expect(location.searchParams.get('code')).toMatch(/^lk_ac_/);
      expect(location.hash).toBe('');
      expect(page.location).not.toMatch(SECRET_PREFIXES);
      expect(page.body).toBe('');
    });

    it.each(['token', 'code token', 'id_token', 'code id_token token'])('response_type=%s → unsupported_response_type, no token', async (responseType) => {
      const browser = new Browser(app.baseUrl);
      await authorizeAsUser(browser, user, url());
      const page = await browser.get(url({ response_type: responseType }));
      const location = new URL(page.location!);
      expect(location.searchParams.get('error')).toBe('unsupported_response_type');
      expect(location.searchParams.has('code')).toBe(false);
      expect(location.searchParams.has('access_token')).toBe(false);
      expect(location.hash).toBe('');
      expect(page.location).not.toMatch(SECRET_PREFIXES);
    });

    it('response_mode=fragment for a code is refused, not half-honoured: invalid_request in the query, no code anywhere', async () => {
      const browser = new Browser(app.baseUrl);
      const page = await browser.get(`${url()}&response_mode=fragment`);
      const location = new URL(page.location!);
      expect(location.hash).toBe('');
      expect(location.searchParams.get('error')).toBe('invalid_request');
      expect(location.searchParams.has('code')).toBe(false);
      expect(page.location).not.toMatch(SECRET_PREFIXES);
    });
  });

  describe('RFC 6749 §5.1, RFC 6819 §5.1.6, RFC 9700 §4.2.4: responses carrying a code or a token are not cached', () => {
    it('POST /token (authorization_code): Cache-Control: no-store and Pragma: no-cache', async () => {
      const { code, pkce } = await obtainCode(app, client, user);
      const result = await tokenRequest(app, client, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier });
      expect(result.status).toBe(200);
      expect(result.headers.get('cache-control')).toBe('no-store');
      expect(result.headers.get('pragma')).toBe('no-cache');
    });

    it('POST /token (refresh_token and client_credentials): the same', async () => {
      const tokens = await obtainTokens(app, client, user, 'notes:read');
      for (const result of [
        await tokenRequest(app, client, { grant_type: 'refresh_token', refresh_token: tokens.refreshToken! }),
        await tokenRequest(app, resourceServer, { grant_type: 'client_credentials' }),
      ]) {
        expect(result.status).toBe(200);
        expect(result.headers.get('cache-control')).toBe('no-store');
        expect(result.headers.get('pragma')).toBe('no-cache');
      }
    });

    it('POST /token errors: the same', async () => {
      const result = await tokenRequest(app, client, { grant_type: 'authorization_code', code: 'lk_ac_nope' });
      expect(result.status).toBe(400);
      expect(result.headers.get('cache-control')).toBe('no-store');
      expect(result.headers.get('pragma')).toBe('no-cache');
    });

    it('POST /register (client_secret and registration_access_token) and GET /register/{id}: no-store', async () => {
      const token = await clientCredentialsToken(admin);
      const registered = await fetch(app.url('/register'), {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'Printer', redirect_uris: ['https://printer.example/cb'], grant_types: ['authorization_code'], scope: 'notes:read' }),
      });
      const body = (await registered.json()) as Record<string, string>;
      expect(registered.status).toBe(201);
      expect(body.client_secret).toMatch(/^lk_cs_/);
      expect(registered.headers.get('cache-control')).toBe('no-store');
      const read = await fetch(new URL(new URL(body.registration_client_uri).pathname, app.baseUrl), { headers: { authorization: `Bearer ${body.registration_access_token}` } });
      expect(read.status).toBe(200);
      expect(read.headers.get('cache-control')).toBe('no-store');
    });

    it('POST /introspect: no-store', async () => {
      const tokens = await obtainTokens(app, client, user, 'notes:read');
      const response = await fetch(app.url('/introspect'), {
        method: 'POST',
        headers: { authorization: basicAuth(resourceServer.clientId, resourceServer.clientSecret!), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: tokens.accessToken }).toString(),
      });
      expect(response.status).toBe(200);
      expect(((await response.json()) as { active: boolean }).active).toBe(true);
      expect(response.headers.get('cache-control')).toBe('no-store');
    });

    it('the redirect carrying the code, and the pages carrying CSRF tokens: no-store', async () => {
      const browser = new Browser(app.baseUrl);
      const login = await browser.get(url());
      expect(login.headers.get('cache-control')).toBe('no-store');
      const page = await authorizeAsUser(browser, user, url());
      expect(redirectParams(page).get('code')).toMatch(/^lk_ac_/);
      expect(page.headers.get('cache-control')).toBe('no-store');
    });
  });

  describe('RFC 6750 §2.3, §5.3 / RFC 9700 §2.5: an access token in the URL is refused', () => {
    let accessToken: string;
    beforeAll(async () => {
      accessToken = (await obtainTokens(app, client, user, 'notes:read notes:write')).accessToken;
    });

    async function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string; headers: Headers }> {
      const response = await fetch(app.url(path), { headers });
      return { status: response.status, text: await response.text(), headers: response.headers };
    }

    it('the same token in the Authorization header is accepted (the control)', async () => {
      expect((await get('/api/v1/notes', { authorization: `Bearer ${accessToken}` })).status).toBe(200);
    });

    it('?access_token=<valid token> → 400 invalid_request, the token is not echoed', async () => {
      const reply = await get(`/api/v1/notes?access_token=${encodeURIComponent(accessToken)}`);
      expect(reply.status).toBe(400);
      expect(JSON.parse(reply.text)).toMatchObject({ error: 'invalid_request' });
      expect(reply.text).not.toContain(accessToken);
      expect(reply.headers.get('www-authenticate') ?? '').not.toContain(accessToken);
    });

    it('?access_token= next to a valid Authorization header → still 400 (the URL copy has leaked already)', async () => {
      const reply = await get(`/api/v1/notes?access_token=${encodeURIComponent(accessToken)}`, { authorization: `Bearer ${accessToken}` });
      expect(reply.status).toBe(400);
    });

    it('access_token in a form body (RFC 6750 §2.2) creates nothing', async () => {
      const before = (JSON.parse((await get('/api/v1/notes', { authorization: `Bearer ${accessToken}` })).text) as unknown[]).length;
      const response = await fetch(app.url('/api/v1/notes'), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ access_token: accessToken, title: 'forged' }).toString(),
      });
      await response.arrayBuffer();
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      const after = (JSON.parse((await get('/api/v1/notes', { authorization: `Bearer ${accessToken}` })).text) as unknown[]).length;
      expect(after).toBe(before);
    });
  });

  describe('RFC 9700 §4.2, RFC 6819 §4.4.2.5: tokens never appear in a Location header', () => {
    it('no Location of a whole flow (authorize, login, consent, token, API create) holds a token or secret', async () => {
      const locations: string[] = [];
      const person = await app.createUser();
      const browser = new Browser(app.baseUrl);
      const pkce = newPkce();
      const login = await browser.get(authorizeUrl(client, { scope: 'notes:write', state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256' }));
      const afterLogin = await browser.submit(login, '/login', { username: person.username, password: person.password });
      locations.push(afterLogin.location!);
      const consent = await browser.get(afterLogin.location!);
      const redirect = await browser.submit(consent, '/consent', { decision: 'allow' });
      locations.push(redirect.location!);
      const code = redirectParams(redirect).get('code')!;
      const tokens = await tokenRequest(app, client, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier });
      expect(tokens.headers.get('location')).toBeNull();
      const created = await fetch(app.url('/api/v1/notes'), {
        method: 'POST',
        headers: { authorization: `Bearer ${tokens.body.access_token as string}`, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'hello' }),
      });
      expect(created.status).toBe(201);
      locations.push(created.headers.get('location')!);
      const refreshed = await tokenRequest(app, client, { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token as string });
      expect(refreshed.headers.get('location')).toBeNull();

      expect(locations).toHaveLength(3);
      for (const location of locations) {
        expect(location).not.toMatch(SECRET_PREFIXES);
        expect(location).not.toContain(tokens.body.access_token as string);
        expect(location).not.toMatch(/access_token|refresh_token|client_secret/);
      }
    });
  });
});
