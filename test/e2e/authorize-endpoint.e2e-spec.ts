import { jest } from '@jest/globals';
import { createHash } from 'node:crypto';
import { AuthorizationCode } from '../../src/codes/authorization-code.entity.js';
import { appConfig } from '../../src/config/app.config.js';
import { User } from '../../src/users/user.entity.js';
import { Browser, type Page } from '../helpers/browser.js';
import { authorizeAsUser, authorizeUrl, newPkce, redirectParams } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';
import { withEnv } from '../helpers/with-env.js';

const CALLBACK = 'https://app.example/callback';
const CODE_FORMAT = /^lk_ac_[A-Za-z0-9_-]{43}$/;

interface Reply {
  status: number;
  headers: Headers;
  body: string;
  location: string | null;
}

/** GET a path on the app without following redirects, with no session. */
async function fetchPage(app: TestApp, path: string): Promise<Reply> {
  const response = await fetch(app.url(path), { redirect: 'manual' });
  return { status: response.status, headers: response.headers, body: await response.text(), location: response.headers.get('location') };
}

/** /authorize with the given parameters in order; a parameter listed twice is sent twice. */
function rawAuthorizeUrl(params: [string, string][]): string {
  const query = new URLSearchParams();
  for (const [name, value] of params) query.append(name, value);
  return `/authorize?${query}`;
}

/** RFC 6749 §4.1.2.1: the user is told, and the browser stays here. */
function expectErrorPage(reply: Reply, ...absent: string[]): void {
  expect(reply.status).toBe(400);
  expect(reply.location).toBeNull();
  expect(reply.headers.get('content-type')).toMatch(/^text\/html/);
  expect(reply.body).toMatch(/^<!doctype html>/i);
  expect(reply.body).toContain('role="alert"');
  // The page never offers the unverified URI as a link either.
  for (const text of absent) expect(reply.body).not.toContain(text);
}

/** The parameters of an error redirect to `redirectUri` (whose own query, if any, must survive). */
function expectErrorRedirect(reply: Reply, redirectUri: string, error: string, issuer: string): URLSearchParams {
  expect(reply.status).toBe(302);
  expect(reply.location).not.toBeNull();
  const location = new URL(reply.location!);
  const registered = new URL(redirectUri);
  expect(`${location.origin}${location.pathname}`).toBe(`${registered.origin}${registered.pathname}`);
  for (const [name, value] of registered.searchParams) expect(location.searchParams.get(name)).toBe(value);
  const params = location.searchParams;
  expect(params.get('error')).toBe(error);
  expect(params.get('error_description')).toEqual(expect.stringMatching(/\S/));
  // RFC 6749 §4.1.2.1: error_description is limited to %x20-21 / %x23-5B / %x5D-7E.
  expect(params.get('error_description')).toMatch(/^[\x20\x21\x23-\x5B\x5D-\x7E]+$/);
  expect(params.get('iss')).toBe(issuer);
  expect(params.has('code')).toBe(false);
  return params;
}

describe('authorization endpoint (RFC 6749 §4.1.1, §4.1.2)', () => {
  let app: TestApp;
  let issuer: string;
  let client: RegisteredClient;
  let multi: RegisteredClient;
  let withQuery: RegisteredClient;
  let publicClient: RegisteredClient;
  let refreshOnly: RegisteredClient;
  let user: TestUser;

  beforeAll(async () => {
    app = await TestApp.start();
    issuer = app.app.get(appConfig.KEY).issuer;
    client = await app.createClient({ name: 'Exact Match App', redirectUris: [CALLBACK], scope: 'notes:read notes:write' });
    multi = await app.createClient({ name: 'Two Callbacks', redirectUris: ['https://multi.example/a', 'https://multi.example/b'], scope: 'notes:read' });
    withQuery = await app.createClient({ name: 'Query Callback', redirectUris: ['https://tenant.example/cb?tenant=acme'], scope: 'notes:read' });
    publicClient = await app.createClient({ name: 'Native App', redirectUris: ['http://127.0.0.1:8765/cb'], scope: 'notes:read', isPublic: true });
    refreshOnly = await app.createClient({ name: 'No Code Grant', redirectUris: ['https://refresh.example/cb'], scope: 'notes:read', grantTypes: ['refresh_token'] });
    user = await app.createUser();
  });
  afterAll(async () => app?.stop());
  afterEach(() => jest.restoreAllMocks());

  /** Every code row of a client, as stored (column names as in the table). */
  async function codeRows(clientId: string): Promise<Record<string, unknown>[]> {
    return app.dataSource.createQueryBuilder().select('*').from('authorization_codes', 'c').where('c.client_id = :clientId', { clientId }).getRawMany();
  }

  describe('errors shown to the user, never redirected: client or redirect URI not verified', () => {
    it.each<[string, [string, string][]]>([
      ['unknown client_id', [['response_type', 'code'], ['client_id', 'no-such-client'], ['redirect_uri', 'https://evil.example/cb'], ['state', 'xyz']]],
      ['missing client_id', [['response_type', 'code'], ['redirect_uri', 'https://evil.example/cb'], ['state', 'xyz']]],
      ['empty client_id', [['response_type', 'code'], ['client_id', ''], ['redirect_uri', 'https://evil.example/cb']]],
      ['overlong client_id', [['response_type', 'code'], ['client_id', 'x'.repeat(65)], ['redirect_uri', 'https://evil.example/cb']]],
    ])('%s → 400 HTML page', async (_name, params) => {
      expectErrorPage(await fetchPage(app, rawAuthorizeUrl(params)), 'evil.example');
    });

    it('repeated client_id (RFC 6749 §3.1) → 400 HTML page', async () => {
      const reply = await fetchPage(app, rawAuthorizeUrl([['response_type', 'code'], ['client_id', client.clientId], ['client_id', multi.clientId], ['redirect_uri', CALLBACK]]));
      expectErrorPage(reply);
    });

    it('an unknown client_id is a page even with a response_type error in the same request', async () => {
      const reply = await fetchPage(app, rawAuthorizeUrl([['response_type', 'token'], ['client_id', 'no-such-client'], ['redirect_uri', CALLBACK]]));
      expectErrorPage(reply);
    });

    // RFC 9700 §4.1.3: redirect URIs are compared as exact strings; no normalisation, prefix or pattern.
    it.each([
      ['an unregistered URI', 'https://evil.example/callback'],
      ['a prefix of the registered one', 'https://app.example/callbac'],
      ['the registered origin only', 'https://app.example/'],
      ['an extra path segment', 'https://app.example/callback/extra'],
      ['an extra query', 'https://app.example/callback?next=https://evil.example'],
      ['a trailing slash', 'https://app.example/callback/'],
      ['a fragment', 'https://app.example/callback#x'],
      ['an upper-case host', 'https://APP.EXAMPLE/callback'],
      ['an upper-case scheme', 'HTTPS://app.example/callback'],
      ['a different path case', 'https://app.example/Callback'],
      ['the explicit default port', 'https://app.example:443/callback'],
      ['a percent-encoded equivalent', 'https://app.example/%63allback'],
      ['a relative reference', '/callback'],
      ['not a URI at all', 'not a uri'],
      ['http instead of https', 'http://app.example/callback'],
      ['a longer host name', 'https://app.example.evil.example/callback'],
      ['user information', 'https://app.example@evil.example/callback'],
      ['surrounding whitespace', ` ${CALLBACK} `],
    ])('redirect_uri with %s → 400 HTML page', async (_name, redirectUri) => {
      const reply = await fetchPage(app, authorizeUrl(client, { redirect_uri: redirectUri, scope: 'notes:read', state: 'xyz' }));
      expectErrorPage(reply, 'evil.example');
    });

    it('a registered redirect URI with its own query must be sent with exactly that query', async () => {
      for (const redirectUri of ['https://tenant.example/cb', 'https://tenant.example/cb?tenant=acme&x=1', 'https://tenant.example/cb?tenant=other']) {
        expectErrorPage(await fetchPage(app, authorizeUrl(withQuery, { redirect_uri: redirectUri })));
      }
    });

    it('redirect_uri registered for another client → 400 HTML page', async () => {
      expectErrorPage(await fetchPage(app, authorizeUrl(client, { redirect_uri: multi.redirectUri, state: 'xyz' })));
    });

    it('repeated redirect_uri, even twice the registered one → 400 HTML page', async () => {
      const reply = await fetchPage(app, rawAuthorizeUrl([['response_type', 'code'], ['client_id', client.clientId], ['redirect_uri', CALLBACK], ['redirect_uri', CALLBACK]]));
      expectErrorPage(reply);
    });

    it('omitted redirect_uri when the client registered several (RFC 6749 §3.1.2.3) → 400 HTML page', async () => {
      for (const redirectUri of [undefined, '']) {
        expectErrorPage(await fetchPage(app, authorizeUrl(multi, { redirect_uri: redirectUri, scope: 'notes:read', state: 'xyz' })), 'multi.example');
      }
    });

    it('an OpenID request without redirect_uri, even from a client with one registered URI (OpenID Connect Core §3.1.2.1, oidcc-ensure-redirect-uri-in-authorization-request) → 400 HTML page, no code', async () => {
      const pkce = newPkce();
      for (const redirectUri of [undefined, '']) {
        expectErrorPage(await fetchPage(app, authorizeUrl(client, { redirect_uri: redirectUri, scope: 'openid notes:read', state: 'xyz', code_challenge: pkce.challenge, code_challenge_method: 'S256' })), 'app.example');
      }
    });

    it('the error page is not cacheable and cannot be framed', async () => {
      const reply = await fetchPage(app, authorizeUrl(client, { redirect_uri: 'https://evil.example/cb' }));
      expect(reply.headers.get('cache-control')).toBe('no-store');
      expect(reply.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(reply.headers.get('x-frame-options')).toBe('DENY');
    });

    it('issues no code and stores nothing', async () => {
      const before = await codeRows(client.clientId);
      await fetchPage(app, authorizeUrl(client, { redirect_uri: 'https://evil.example/cb' }));
      expect(await codeRows(client.clientId)).toHaveLength(before.length);
    });
  });

  describe('redirect URI selection', () => {
    it('omitted redirect_uri with one registered URI: errors go to that URI', async () => {
      const reply = await fetchPage(app, authorizeUrl(client, { redirect_uri: undefined, response_type: 'token', state: 'st' }));
      expect(expectErrorRedirect(reply, CALLBACK, 'unsupported_response_type', issuer).get('state')).toBe('st');
    });

    it('any of several registered URIs may be named, and the answer goes to the one named', async () => {
      const reply = await fetchPage(app, authorizeUrl(multi, { redirect_uri: 'https://multi.example/b', response_type: 'token' }));
      expectErrorRedirect(reply, 'https://multi.example/b', 'unsupported_response_type', issuer);
    });

    it("the registered URI's own query is kept in error redirects (RFC 6749 §3.1.2)", async () => {
      const reply = await fetchPage(app, authorizeUrl(withQuery, { response_type: 'token', state: 'st' }));
      const params = expectErrorRedirect(reply, withQuery.redirectUri, 'unsupported_response_type', issuer);
      expect(params.getAll('tenant')).toEqual(['acme']);
    });
  });

  describe('errors redirected to the client (RFC 6749 §4.1.2.1)', () => {
    const pkce = newPkce();
    const S256 = { code_challenge: pkce.challenge, code_challenge_method: 'S256' };

    it.each<[string, string, Record<string, string | undefined>]>([
      ['response_type missing', 'invalid_request', { response_type: undefined }],
      ['response_type empty', 'invalid_request', { response_type: '' }],
      ['response_type=token (implicit grant)', 'unsupported_response_type', { response_type: 'token' }],
      ['response_type=code token', 'unsupported_response_type', { response_type: 'code token' }],
      ['response_type=CODE (case-sensitive)', 'unsupported_response_type', { response_type: 'CODE' }],
      ['a scope the client is not registered for', 'invalid_scope', { scope: 'photos:read' }],
      ['an allowed scope plus one that is not', 'invalid_scope', { scope: 'notes:read photos:write' }],
      ['a scope unknown to the server', 'invalid_scope', { scope: 'admin' }],
      ['a malformed scope (two spaces)', 'invalid_scope', { scope: 'notes:read  notes:write' }],
      ['a malformed scope (quote)', 'invalid_scope', { scope: 'notes:"read"' }],
      ['code_challenge_method=plain (RFC 9700 §2.1.1)', 'invalid_request', { code_challenge: pkce.verifier, code_challenge_method: 'plain' }],
      ['code_challenge_method=s256 (case-sensitive)', 'invalid_request', { code_challenge: pkce.challenge, code_challenge_method: 's256' }],
      ['code_challenge without a method (defaults to plain, RFC 7636 §4.3)', 'invalid_request', { code_challenge: pkce.challenge, code_challenge_method: undefined }],
      ['code_challenge_method without code_challenge', 'invalid_request', { code_challenge: undefined, code_challenge_method: 'S256' }],
      ['code_challenge of 42 characters', 'invalid_request', { ...S256, code_challenge: 'a'.repeat(42) }],
      ['code_challenge of 129 characters', 'invalid_request', { ...S256, code_challenge: 'a'.repeat(129) }],
      ['code_challenge in standard base64 (+ / =)', 'invalid_request', { ...S256, code_challenge: `${'a'.repeat(41)}+/=` }],
      // OpenID Connect Core §6.1: never the unsigned parameters beside a request object the server cannot read.
      ['a request object (Core §6.1)', 'request_not_supported', { request: 'eyJhbGciOiJub25lIn0.eyJzY29wZSI6Im5vdGVzOndyaXRlIn0.' }],
      // Multiple Response Types §2.1: a mode the answer would not come in is refused, not ignored.
      ['response_mode=fragment for a code (only the query is offered)', 'invalid_request', { response_mode: 'fragment' }],
      ['response_mode unknown', 'invalid_request', { response_mode: 'bogus' }],
      // Core §6.2: a request_uri that is a URL names a request object to fetch; only pushed requests' URNs are taken.
      ['a request object by reference (Core §6.2)', 'request_uri_not_supported', { request_uri: 'https://rp.example/request.jwt' }],
    ])('%s → %s', async (_name, error, params) => {
      const reply = await fetchPage(app, authorizeUrl(client, { scope: 'notes:read', state: 'S-1', ...S256, ...params }));
      expect(expectErrorRedirect(reply, CALLBACK, error, issuer).get('state')).toBe('S-1');
    });

    it('an empty request or request_uri is no parameter at all (RFC 6749 §3.1), and response_mode=query for a code is its default: the sign-in page, not an error', async () => {
      const reply = await fetchPage(app, authorizeUrl(client, { scope: 'notes:read', state: 'S-5', ...S256, request: '', request_uri: '', response_mode: 'query' }));
      expect(reply.status).toBe(200);
      expect(reply.body).toContain('action="/login"');
    });

    it('a public client without PKCE (RFC 9700 §2.1.1) → invalid_request', async () => {
      const reply = await fetchPage(app, authorizeUrl(publicClient, { scope: 'notes:read', state: 'S-2' }));
      expect(expectErrorRedirect(reply, publicClient.redirectUri, 'invalid_request', issuer).get('state')).toBe('S-2');
    });

    it('a client not registered for the authorization code grant → unauthorized_client', async () => {
      const reply = await fetchPage(app, authorizeUrl(refreshOnly, { scope: 'notes:read', state: 'S-3' }));
      expect(expectErrorRedirect(reply, refreshOnly.redirectUri, 'unauthorized_client', issuer).get('state')).toBe('S-3');
    });

    it.each(['response_type', 'scope', 'code_challenge', 'code_challenge_method'])('repeated %s (RFC 6749 §3.1) → invalid_request', async (name) => {
      const params: [string, string][] = [
        ['response_type', 'code'],
        ['client_id', client.clientId],
        ['redirect_uri', CALLBACK],
        ['scope', 'notes:read'],
        ['state', 'S-4'],
        ['code_challenge', pkce.challenge],
        ['code_challenge_method', 'S256'],
      ];
      const repeated = params.find(([n]) => n === name)!;
      const reply = await fetchPage(app, rawAuthorizeUrl([...params, repeated]));
      expect(expectErrorRedirect(reply, CALLBACK, 'invalid_request', issuer).get('state')).toBe('S-4');
    });

    it('repeated state (RFC 6749 §3.1) → invalid_request', async () => {
      const reply = await fetchPage(app, rawAuthorizeUrl([['response_type', 'code'], ['client_id', client.clientId], ['redirect_uri', CALLBACK], ['state', 'a'], ['state', 'b']]));
      expectErrorRedirect(reply, CALLBACK, 'invalid_request', issuer);
    });

    it('sends no state when the request carried none', async () => {
      const reply = await fetchPage(app, authorizeUrl(client, { response_type: 'token' }));
      expect(expectErrorRedirect(reply, CALLBACK, 'unsupported_response_type', issuer).has('state')).toBe(false);
    });

    it('sends state back character for character', async () => {
      const state = 'a b+c&d=e/é%20#?';
      const reply = await fetchPage(app, authorizeUrl(client, { response_type: 'token', state }));
      expect(expectErrorRedirect(reply, CALLBACK, 'unsupported_response_type', issuer).get('state')).toBe(state);
    });

    it('error redirects are not cacheable', async () => {
      const reply = await fetchPage(app, authorizeUrl(client, { response_type: 'token' }));
      expect(reply.headers.get('cache-control')).toBe('no-store');
    });

    it('the user denies → access_denied with state', async () => {
      const page = await authorizeAsUser(new Browser(app.baseUrl), user, authorizeUrl(client, { scope: 'notes:write', state: 'deny-state', ...S256 }), 'deny');
      expect([302, 303]).toContain(page.status);
      expect(page.location!.startsWith(`${CALLBACK}?`)).toBe(true);
      const params = redirectParams(page);
      expect(params.get('error')).toBe('access_denied');
      expect(params.get('error_description')).toEqual(expect.stringMatching(/\S/));
      expect(params.get('state')).toBe('deny-state');
      expect(params.get('iss')).toBe(issuer);
      expect(params.has('code')).toBe(false);
    });
  });

  describe('success (RFC 6749 §4.1.2, RFC 9207)', () => {
    async function approve(target: RegisteredClient, params: Record<string, string | undefined>, as: TestUser = user): Promise<Page> {
      const page = await authorizeAsUser(new Browser(app.baseUrl), as, authorizeUrl(target, params));
      expect([302, 303]).toContain(page.status);
      return page;
    }

    it('POST /authorize, form-serialized (OpenID Connect Core §3.1.2.1, oidcc-ensure-post-request-succeeds): 303 to the same request as a GET, which signs in and redirects with a code', async () => {
      const pkce = newPkce();
      const params = { response_type: 'code', client_id: client.clientId, redirect_uri: CALLBACK, scope: 'notes:read', state: 'posted é&=', code_challenge: pkce.challenge, code_challenge_method: 'S256' };
      const posted = await fetch(app.url('/authorize'), { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(params) });
      expect(posted.status).toBe(303);
      const location = posted.headers.get('location')!;
      expect(new URL(location, app.baseUrl).pathname).toBe('/authorize');
      expect(Object.fromEntries(new URL(location, app.baseUrl).searchParams)).toEqual(params);
      const page = await authorizeAsUser(new Browser(app.baseUrl), user, location);
      expect(redirectParams(page).get('code')).toMatch(CODE_FORMAT);
      expect(redirectParams(page).get('state')).toBe(params.state);
    });

    it('POST /authorize keeps a repeated parameter repeated, so the GET refuses it as it would its own (RFC 6749 §3.1); one too long for a URL is a 400 page', async () => {
      const body = `${new URLSearchParams({ response_type: 'code', client_id: client.clientId, redirect_uri: CALLBACK })}&scope=notes%3Aread&scope=notes%3Awrite`;
      const posted = await fetch(app.url('/authorize'), { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
      expect(new URL(posted.headers.get('location')!, app.baseUrl).searchParams.getAll('scope')).toEqual(['notes:read', 'notes:write']);
      const reply = await fetchPage(app, posted.headers.get('location')!);
      expectErrorRedirect(reply, CALLBACK, 'invalid_request', issuer);
      const huge = await fetch(app.url('/authorize'), { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ client_id: client.clientId, state: 's'.repeat(9000) }) });
      expect(huge.status).toBe(400);
      expect(huge.headers.get('location')).toBeNull();
    });

    it('redirects with code, the identical state and iss, and nothing else added', async () => {
      const pkce = newPkce();
      const state = 'Zx9 /+?&=é';
      const page = await approve(client, { scope: 'notes:read', state, code_challenge: pkce.challenge, code_challenge_method: 'S256' });
      expect(page.location!.startsWith(`${CALLBACK}?`)).toBe(true);
      const params = redirectParams(page);
      expect([...params.keys()].sort()).toEqual(['code', 'iss', 'state']);
      expect(params.get('code')).toMatch(CODE_FORMAT);
      expect(params.get('state')).toBe(state);
      expect(params.get('iss')).toBe(issuer);
      expect(page.headers.get('cache-control')).toBe('no-store');
    });

    it('sends no state when none was sent', async () => {
      const params = redirectParams(await approve(client, { scope: 'notes:read', state: undefined }));
      expect(params.has('state')).toBe(false);
      expect(params.get('code')).toMatch(CODE_FORMAT);
    });

    it('carries at least 256 bits of randomness in each code, and never repeats one', async () => {
      const codes = new Set<string>();
      for (let i = 0; i < 3; i++) codes.add(redirectParams(await approve(client, { scope: 'notes:read' })).get('code')!);
      expect(codes.size).toBe(3);
      for (const code of codes) expect(Buffer.from(code.slice('lk_ac_'.length), 'base64url')).toHaveLength(32);
    });

    it("keeps the registered URI's own query and appends the response (RFC 6749 §3.1.2)", async () => {
      const page = await approve(withQuery, { redirect_uri: undefined, state: 'q' });
      const location = new URL(page.location!);
      expect(`${location.origin}${location.pathname}`).toBe('https://tenant.example/cb');
      expect(location.searchParams.getAll('tenant')).toEqual(['acme']);
      expect(location.searchParams.get('code')).toMatch(CODE_FORMAT);
      expect(location.searchParams.get('state')).toBe('q');
    });

    it('uses the single registered URI when redirect_uri is omitted, and records that it was omitted', async () => {
      const page = await approve(client, { redirect_uri: undefined, scope: 'notes:read', state: 'omitted' });
      expect(page.location!.startsWith(`${CALLBACK}?`)).toBe(true);
      const code = redirectParams(page).get('code')!;
      const row = await app.dataSource.getRepository(AuthorizationCode).findOneByOrFail({ codeHash: createHash('sha256').update(code).digest('hex') });
      expect(row.redirectUri).toBe(CALLBACK);
      expect(row.redirectUriInRequest).toBe(false);
    });

    it('a public client with S256 PKCE gets a code', async () => {
      const pkce = newPkce();
      const page = await approve(publicClient, { scope: 'notes:read', state: 'p', code_challenge: pkce.challenge, code_challenge_method: 'S256' });
      expect(page.location!.startsWith(`${publicClient.redirectUri}?`)).toBe(true);
      expect(redirectParams(page).get('code')).toMatch(CODE_FORMAT);
    });

    it('stores only a hash of the code, bound to client, redirect URI, user, scope and challenge, expiring after 600 s by default', async () => {
      const pkce = newPkce();
      const fixed = new Date(Math.floor(Date.now() / 1000) * 1000);
      jest.spyOn(app.clock, 'now').mockReturnValue(fixed);
      const page = await approve(client, { scope: 'notes:write notes:read', state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256' });
      const code = redirectParams(page).get('code')!;

      // Nothing in the table holds the code or its random part.
      const raw = await codeRows(client.clientId);
      const serialized = JSON.stringify(raw);
      expect(serialized).not.toContain(code);
      expect(serialized).not.toContain(code.slice('lk_ac_'.length));

      const hash = createHash('sha256').update(code).digest('hex');
      expect(raw.filter((r) => r.code_hash === hash)).toHaveLength(1);
      const row = await app.dataSource.getRepository(AuthorizationCode).findOneByOrFail({ codeHash: hash });
      const owner = await app.dataSource.getRepository(User).findOneByOrFail({ username: user.username });
      expect(row).toMatchObject({
        clientId: client.clientId,
        userId: owner.id,
        redirectUri: CALLBACK,
        redirectUriInRequest: true,
        scope: 'notes:read notes:write',
        codeChallenge: pkce.challenge,
        consumedAt: null,
      });
      // RFC 6749 §4.1.2: a maximum lifetime of 10 minutes; CODE_TTL_SECONDS defaults to 600.
      expect(row.expiresAt.getTime() - fixed.getTime()).toBe(600_000);
      // created_at comes from the database's clock, which the fixed clock stands near.
      expect(Math.abs(row.expiresAt.getTime() - row.createdAt.getTime() - 600_000)).toBeLessThan(10_000);
    });

    it('binds the code to the scope actually granted: the registered scope when none is requested (RFC 6749 §3.3)', async () => {
      const page = await approve(client, { scope: undefined });
      const code = redirectParams(page).get('code')!;
      const row = await app.dataSource.getRepository(AuthorizationCode).findOneByOrFail({ codeHash: createHash('sha256').update(code).digest('hex') });
      expect(row.scope).toBe('notes:read notes:write');
      expect(row.codeChallenge).toBeNull();
    });

    it('binds the code to the user who logged in', async () => {
      const other = await app.createUser();
      const code = redirectParams(await approve(client, { scope: 'notes:read' }, other)).get('code')!;
      const row = await app.dataSource.getRepository(AuthorizationCode).findOneByOrFail({ codeHash: createHash('sha256').update(code).digest('hex') });
      const owner = await app.dataSource.getRepository(User).findOneByOrFail({ username: other.username });
      expect(row.userId).toBe(owner.id);
    });
  });

  describe('CODE_TTL_SECONDS (never above 600, RFC 6749 §4.1.2)', () => {
    /** Starts a second instance with extra settings; returns why it refused to start, or undefined if it started. */
    async function startupFailure(env: Record<string, string>): Promise<unknown> {
      return withEnv(env, async () => {
        try {
          const second = await TestApp.start();
          await second.app.close(); // not stop(): that would drop the database this file shares
          return undefined;
        } catch (error) {
          return error;
        }
      });
    }

    // Runs before the refused start-ups: an app started after one of those did not close its connections.
    it('a configured CODE_TTL_SECONDS sets expires_at', async () => {
      // A second instance on the same database: closed, never stop()ped, which would drop the database.
      const second = await withEnv({ CODE_TTL_SECONDS: '120' }, () => TestApp.start());
      try {
        const fixed = new Date(Math.floor(Date.now() / 1000) * 1000);
        jest.spyOn(second.clock, 'now').mockReturnValue(fixed);
        const page = await authorizeAsUser(new Browser(second.baseUrl), user, authorizeUrl(client, { scope: 'notes:read' }));
        const code = redirectParams(page).get('code')!;
        const row = await app.dataSource.getRepository(AuthorizationCode).findOneByOrFail({ codeHash: createHash('sha256').update(code).digest('hex') });
        expect(row.expiresAt.getTime() - fixed.getTime()).toBe(120_000);
      } finally {
        await second.app.close();
      }
    });

    it.each(['601', '3600', '0', '-5', 'ten'])('CODE_TTL_SECONDS=%s stops the start-up with a message naming it', async (value) => {
      const error = await startupFailure({ CODE_TTL_SECONDS: value });
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toContain('CODE_TTL_SECONDS');
    });
  });
});
