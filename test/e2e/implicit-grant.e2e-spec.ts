import { jest } from '@jest/globals';
import { appConfig } from '../../src/config/app.config.js';
import { ApiClient } from '../helpers/api-client.js';
import { Browser, type Page } from '../helpers/browser.js';
import { authorizeAsUser, authorizeUrl, basicAuth, newPkce, postToken } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';

const CALLBACK = 'https://spa.example/callback';
const IMPLICIT_TTL = 300;

/** The parameters of a redirect's fragment (RFC 6749 §4.2.2: application/x-www-form-urlencoded). */
function fragmentOf(page: Page): URLSearchParams {
  if (!page.location) throw new Error(`Expected a redirect, got ${page.status}:\n${page.body}`);
  return new URLSearchParams(new URL(page.location).hash.slice(1));
}

function queryOf(page: Page): URLSearchParams {
  if (!page.location) throw new Error(`Expected a redirect, got ${page.status}:\n${page.body}`);
  return new URL(page.location).searchParams;
}

/** The redirect goes to the registered URI itself, whatever follows it. */
function expectRedirectTo(page: Page, redirectUri: string, statuses: number[] = [302, 303]): void {
  expect(statuses).toContain(page.status);
  const location = new URL(page.location!);
  expect(`${location.origin}${location.pathname}`).toBe(redirectUri);
}

/** The implicit grant (RFC 6749 §4.2): off unless an administrator registers the client for it (RFC 9700 §2.1.2). */
describe('implicit grant (RFC 6749 §4.2)', () => {
  let app: TestApp;
  let issuer: string;
  let implicitClient: RegisteredClient;
  let codeClient: RegisteredClient;
  let both: RegisteredClient;
  let publicImplicit: RegisteredClient;
  let introspector: RegisteredClient;
  let user: TestUser;

  beforeAll(async () => {
    app = await TestApp.start();
    issuer = app.app.get(appConfig.KEY).issuer;
    implicitClient = await app.createClient({ name: 'Legacy SPA', redirectUris: [CALLBACK], scope: 'notes:read notes:write', grantTypes: ['implicit'] });
    codeClient = await app.createClient({ name: 'Modern App', redirectUris: ['https://modern.example/cb'], scope: 'notes:read' });
    both = await app.createClient({ name: 'Both', redirectUris: ['https://both.example/cb'], scope: 'notes:read', grantTypes: ['authorization_code', 'implicit'] });
    publicImplicit = await app.createClient({ name: 'Public SPA', redirectUris: ['https://public-spa.example/cb'], scope: 'notes:read', isPublic: true, grantTypes: ['implicit'] });
    introspector = await app.createClient({ name: 'RS', redirectUris: [], scope: 'tokens:introspect', grantTypes: ['client_credentials'] });
    user = await app.createUser();
  });
  afterAll(async () => app?.stop());
  afterEach(() => jest.restoreAllMocks());

  async function tokenRows(clientId: string): Promise<{ kind: string; expires_at: string | Date; created_at: string | Date }[]> {
    return app.dataSource.query(`SELECT kind, expires_at, created_at FROM tokens WHERE client_id = '${clientId}'`);
  }

  /** A fresh browser signed in as the user, with consent given once for `client` (so later requests redirect at once). */
  async function signedIn(client: RegisteredClient, scope = 'notes:read'): Promise<Browser> {
    const browser = new Browser(app.baseUrl);
    const page = await authorizeAsUser(browser, user, authorizeUrl(client, { response_type: 'token', scope, state: 'warm-up' }));
    expect([302, 303]).toContain(page.status);
    return browser;
  }

  describe('refused by default (RFC 9700 §2.1.2)', () => {
    it('response_type=token from a client not registered for it → unsupported_response_type in the query, no token issued', async () => {
      const page = await new Browser(app.baseUrl).get(authorizeUrl(codeClient, { response_type: 'token', state: 'st-1' }));
      expectRedirectTo(page, codeClient.redirectUri, [302]);
      const params = queryOf(page);
      expect(Object.fromEntries(params)).toEqual({ error: 'unsupported_response_type', error_description: expect.any(String), state: 'st-1', iss: issuer });
      expect(new URL(page.location!).hash).toBe('');
      expect(await tokenRows(codeClient.clientId)).toEqual([]);
    });

    it('is refused the same way for a signed-in user who already consented to that client', async () => {
      const browser = new Browser(app.baseUrl);
      const pkce = newPkce();
      const code = await authorizeAsUser(browser, user, authorizeUrl(codeClient, { scope: 'notes:read', code_challenge: pkce.challenge, code_challenge_method: 'S256' }));
      expect(queryOf(code).get('code')).toBeTruthy();
      const page = await browser.get(authorizeUrl(codeClient, { response_type: 'token', scope: 'notes:read' }));
      expect(queryOf(page).get('error')).toBe('unsupported_response_type');
      expect(new URL(page.location!).hash).toBe('');
    });

    it('grant_type=implicit at the token endpoint is unsupported_grant_type: the implicit grant has no token request', async () => {
      const reply = await postToken(app, { grant_type: 'implicit' }, { authorization: basicAuth(introspector.clientId, introspector.clientSecret!) });
      expect(reply.status).toBe(400);
      expect(reply.body.error).toBe('unsupported_grant_type');
    });
  });

  describe('a client registered for it (RFC 6749 §4.2.1, §4.2.2)', () => {
    it('after login and consent, redirects with the access token in the fragment: no code, no refresh token, a short lifetime', async () => {
      const page = await authorizeAsUser(new Browser(app.baseUrl), user, authorizeUrl(implicitClient, { response_type: 'token', scope: 'notes:read', state: 'xyz' }));
      expectRedirectTo(page, CALLBACK, [303]);
      // Never cached, never sent on as a referrer (RFC 9700 §4.2.4).
      expect(page.headers.get('cache-control')).toBe('no-store');
      expect(page.headers.get('referrer-policy')).toBe('no-referrer');
      expect([...queryOf(page).keys()]).toEqual([]);
      expect(Object.fromEntries(fragmentOf(page))).toEqual({
        access_token: expect.stringMatching(/^lk_at_[A-Za-z0-9_-]{43}$/),
        token_type: 'bearer',
        expires_in: String(IMPLICIT_TTL),
        scope: 'notes:read',
        state: 'xyz',
        iss: issuer,
      });
    });

    it('the token reads the data API, is introspectable with its client and user, and lives IMPLICIT_TOKEN_TTL_SECONDS', async () => {
      const browser = await signedIn(implicitClient);
      const page = await browser.get(authorizeUrl(implicitClient, { response_type: 'token', scope: 'notes:read' }));
      expectRedirectTo(page, CALLBACK, [302]);
      const token = fragmentOf(page).get('access_token')!;

      expect((await new ApiClient(app, token).get('/api/v1/notes')).status).toBe(200);
      // Only the scope granted: notes:read does not write.
      expect((await new ApiClient(app, token).post('/api/v1/notes', { title: 'x' })).status).toBe(403);

      const response = await fetch(app.url('/introspect'), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(introspector.clientId, introspector.clientSecret!) },
        body: new URLSearchParams({ token }).toString(),
      });
      const body = (await response.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ active: true, client_id: implicitClient.clientId, scope: 'notes:read', token_type: 'bearer', sub: expect.any(String) });
      expect((body.exp as number) - (body.iat as number)).toBe(IMPLICIT_TTL);

      const now = Date.now();
      jest.spyOn(app.clock, 'now').mockReturnValue(new Date(now + (IMPLICIT_TTL - 10) * 1000));
      expect((await new ApiClient(app, token).get('/api/v1/notes')).status).toBe(200);
      jest.spyOn(app.clock, 'now').mockReturnValue(new Date(now + (IMPLICIT_TTL + 1) * 1000));
      const expired = await new ApiClient(app, token).get('/api/v1/notes');
      expect({ status: expired.status, error: (expired.json as Record<string, unknown>).error }).toEqual({ status: 401, error: 'invalid_token' });
    });

    it('stores access tokens only: the implicit grant never issues a refresh token (§4.2.2)', async () => {
      const browser = await signedIn(implicitClient);
      await browser.get(authorizeUrl(implicitClient, { response_type: 'token' }));
      const rows = await tokenRows(implicitClient.clientId);
      expect(rows.length).toBeGreaterThan(0);
      expect(new Set(rows.map((r) => r.kind))).toEqual(new Set(['access']));
    });

    it('without scope grants the client\'s registered scope (§3.3)', async () => {
      const browser = await signedIn(implicitClient, 'notes:read notes:write');
      const page = await browser.get(authorizeUrl(implicitClient, { response_type: 'token' }));
      expect(fragmentOf(page).get('scope')).toBe('notes:read notes:write');
    });

    it.each([
      ['letters', 'abc123'],
      ['reserved characters', 'a b&c=d#e+f%20g/h?i'],
      ['non-ASCII', 'état-☃'],
    ])('returns state with %s unchanged (§4.2.2)', async (_case, state) => {
      const browser = await signedIn(implicitClient);
      const page = await browser.get(authorizeUrl(implicitClient, { response_type: 'token', state }));
      expect(fragmentOf(page).get('state')).toBe(state);
    });

    it('omits state when the request had none', async () => {
      const browser = await signedIn(implicitClient);
      const page = await browser.get(authorizeUrl(implicitClient, { response_type: 'token' }));
      expect(fragmentOf(page).has('state')).toBe(false);
      expect(fragmentOf(page).get('access_token')).toBeTruthy();
    });

    it('response_mode=query is refused for a token (it would put the token in the query, Multiple Response Types §2.1): invalid_request in the fragment, no token', async () => {
      const browser = await signedIn(implicitClient);
      const page = await browser.get(authorizeUrl(implicitClient, { response_type: 'token', state: 'q', response_mode: 'query' }));
      expect(Object.fromEntries(fragmentOf(page))).toEqual(expect.objectContaining({ error: 'invalid_request', state: 'q' }));
      expect(fragmentOf(page).has('access_token')).toBe(false);
      expect(new URL(page.location!).search).toBe('');
    });

    it('works for a public client too, with no PKCE (there is no code to bind)', async () => {
      const page = await authorizeAsUser(new Browser(app.baseUrl), user, authorizeUrl(publicImplicit, { response_type: 'token', state: 'p' }));
      expect(fragmentOf(page).get('access_token')).toMatch(/^lk_at_/);
    });

    it('a client registered for both grants gets a code for response_type=code and a token for response_type=token', async () => {
      const browser = await signedIn(both);
      const token = await browser.get(authorizeUrl(both, { response_type: 'token' }));
      expect(fragmentOf(token).get('access_token')).toMatch(/^lk_at_/);
      const code = await browser.get(authorizeUrl(both, { response_type: 'code', scope: 'notes:read' }));
      expect(queryOf(code).get('code')).toMatch(/^lk_ac_/);
      expect(new URL(code.location!).hash).toBe('');
    });
  });

  describe('errors for a client registered for it (RFC 6749 §4.2.2.1: in the fragment)', () => {
    it.each<[string, string, Record<string, string>]>([
      ['a scope the client is not registered for', 'invalid_scope', { scope: 'photos:read' }],
      ['a malformed scope', 'invalid_scope', { scope: 'notes:read  notes:write' }],
      ['a PKCE challenge (RFC 7636 binds codes only)', 'invalid_request', { code_challenge: newPkce().challenge, code_challenge_method: 'S256' }],
      ['code_challenge_method alone', 'invalid_request', { code_challenge_method: 'S256' }],
    ])('%s → %s', async (_case, error, params) => {
      const browser = await signedIn(implicitClient);
      const before = (await tokenRows(implicitClient.clientId)).length;
      const page = await browser.get(authorizeUrl(implicitClient, { response_type: 'token', state: 'err', ...params }));
      expectRedirectTo(page, CALLBACK, [302]);
      expect([...queryOf(page).keys()]).toEqual([]);
      expect(Object.fromEntries(fragmentOf(page))).toEqual({ error, error_description: expect.stringMatching(/^[\x20\x21\x23-\x5B\x5D-\x7E]+$/), state: 'err', iss: issuer });
      expect((await tokenRows(implicitClient.clientId)).length).toBe(before);
    });

    it('a repeated parameter → invalid_request in the fragment', async () => {
      const query = `${authorizeUrl(implicitClient, { response_type: 'token', state: 'rep' })}&scope=notes:read&scope=notes:write`;
      const page = await new Browser(app.baseUrl).get(query);
      expect(Object.fromEntries(fragmentOf(page))).toMatchObject({ error: 'invalid_request', state: 'rep', iss: issuer });
    });

    it('the user choosing Deny → access_denied in the fragment, 303', async () => {
      const page = await authorizeAsUser(new Browser(app.baseUrl), await app.createUser(), authorizeUrl(implicitClient, { response_type: 'token', state: 'no' }), 'deny');
      expectRedirectTo(page, CALLBACK, [303]);
      expect([...queryOf(page).keys()]).toEqual([]);
      expect(Object.fromEntries(fragmentOf(page))).toEqual({ error: 'access_denied', error_description: expect.any(String), state: 'no', iss: issuer });
    });

    it('response_type=code from an implicit-only client → unauthorized_client in the query (the code flow\'s response mode)', async () => {
      const page = await new Browser(app.baseUrl).get(authorizeUrl(implicitClient, { response_type: 'code', state: 'c', code_challenge: newPkce().challenge, code_challenge_method: 'S256' }));
      expect(Object.fromEntries(queryOf(page))).toMatchObject({ error: 'unauthorized_client', state: 'c', iss: issuer });
      expect(new URL(page.location!).hash).toBe('');
    });
  });

  describe('never redirected: redirect URI matched exactly, as for codes (RFC 6749 §4.2.2.1, RFC 9700 §4.1.3)', () => {
    it.each([
      ['an unregistered URI', 'https://evil.example/callback'],
      ['a prefix of the registered one', 'https://spa.example/callbac'],
      ['an extra path segment', 'https://spa.example/callback/x'],
      ['an extra query', 'https://spa.example/callback?x=1'],
      ['a fragment', 'https://spa.example/callback#access_token=planted'],
    ])('%s → 400 error page, no token', async (_case, redirectUri) => {
      const browser = await signedIn(implicitClient);
      const before = (await tokenRows(implicitClient.clientId)).length;
      const page = await browser.get(authorizeUrl(implicitClient, { response_type: 'token', redirect_uri: redirectUri }));
      expect({ status: page.status, location: page.location }).toEqual({ status: 400, location: undefined });
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect((await tokenRows(implicitClient.clientId)).length).toBe(before);
    });

    it('an unknown client → 400 error page', async () => {
      const page = await new Browser(app.baseUrl).get(authorizeUrl({ clientId: 'no-such-client', redirectUri: CALLBACK }, { response_type: 'token' }));
      expect({ status: page.status, location: page.location }).toEqual({ status: 400, location: undefined });
    });
  });
});
