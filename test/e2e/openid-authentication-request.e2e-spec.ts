/**
 * OpenID Connect Core §3.1.2.1 authentication request parameters at GET /authorize: prompt,
 * max_age, login_hint, id_token_hint, and unknown parameters. Test names follow the OpenID
 * Foundation's Basic OP test modules they mirror. The sign-in's age is moved by the injected
 * clock, not by sleeping.
 */
import { jest } from '@jest/globals';
import { decodeJwt } from 'jose';
import { Browser, isConsentPage, isLoginPage, type Page } from '../helpers/browser.js';
import { authorizeAsUser, authorizeUrl, basicAuth, newPkce, redirectParams, tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClientWithMethod, type TestUser } from '../helpers/test-app.js';

const ISSUER = 'https://auth.example.test';

describe('OpenID Connect authentication requests (Core §3.1.2.1)', () => {
  let app: TestApp;
  let client: RegisteredClientWithMethod;
  let alice: TestUser;
  let bob: TestUser;

  /** A signed-in browser that has consented to `scope` for the client. */
  async function signedIn(user: TestUser, scope = 'openid notes:read'): Promise<Browser> {
    const browser = new Browser(app.baseUrl);
    const page = await authorizeAsUser(browser, user, authorizeUrl(client, { scope, state: 's', code_challenge: newPkce().challenge, code_challenge_method: 'S256' }));
    // 303 after the consent form; 302 when an earlier test already left consent for this scope.
    expect([302, 303]).toContain(page.status);
    expect(redirectParams(page).get('code')).toMatch(/^lk_ac_/);
    return browser;
  }

  async function idTokenFrom(page: Page, pkce: ReturnType<typeof newPkce>): Promise<Record<string, unknown>> {
    const code = redirectParams(page).get('code')!;
    const tokens = await tokenRequest(app, client, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier });
    expect(tokens.status).toBe(200);
    return decodeJwt(tokens.body.id_token as string);
  }

  const request = (params: Record<string, string>, pkce = newPkce()): string =>
    authorizeUrl(client, { scope: 'openid notes:read', state: 'xyz', code_challenge: pkce.challenge, code_challenge_method: 'S256', ...params });

  beforeAll(async () => {
    app = await TestApp.start({ ISSUER });
    client = await app.createClient({ redirectUris: ['https://rp.example/cb'], scope: 'notes:read', grantTypes: ['authorization_code', 'refresh_token'] as never });
    alice = await app.createUser('alice-oidc');
    bob = await app.createUser('bob-oidc');
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(async () => app?.stop());

  describe('prompt=none', () => {
    it('oidcc-prompt-none-not-logged-in: answers login_required to the client, with state and iss, and shows no page', async () => {
      const page = await new Browser(app.baseUrl).get(request({ prompt: 'none' }));
      expect(page.status).toBe(302);
      const params = redirectParams(page);
      expect(new URL(page.location!).origin).toBe('https://rp.example');
      expect(Object.fromEntries(params)).toEqual(expect.objectContaining({ error: 'login_required', state: 'xyz', iss: ISSUER }));
    });

    it('oidcc-prompt-none-logged-in: issues a code at once for a signed-in person who has consented', async () => {
      const browser = await signedIn(alice);
      const pkce = newPkce();
      const page = await browser.get(request({ prompt: 'none' }, pkce));
      expect(page.status).toBe(302);
      expect(redirectParams(page).get('code')).toMatch(/^lk_ac_/);
      expect((await idTokenFrom(page, pkce)).sub).toEqual(expect.any(String));
    });

    it('answers consent_required when the person has not allowed the scope asked for', async () => {
      const browser = await signedIn(alice);
      const page = await browser.get(request({ prompt: 'none', scope: 'openid email notes:read' }));
      expect(redirectParams(page).get('error')).toBe('consent_required');
    });

    it('cannot be combined with another value (invalid_request)', async () => {
      const page = await new Browser(app.baseUrl).get(request({ prompt: 'none login' }));
      expect(redirectParams(page).get('error')).toBe('invalid_request');
    });
  });

  describe('prompt=login and prompt=consent', () => {
    it('oidcc-prompt-login: asks a signed-in person to sign in again, then issues a code with a newer auth_time', async () => {
      const browser = await signedIn(alice);
      const first = newPkce();
      const before = await idTokenFrom(await browser.get(request({ prompt: 'none' }, first)), first);
      const later = new Date(Date.now() + 120_000);
      jest.spyOn(app.clock, 'now').mockImplementation(() => later);
      const pkce = newPkce();
      const page = await browser.get(request({ prompt: 'login' }, pkce));
      expect(isLoginPage(page)).toBe(true);
      const done = await authorizeAsUser(browser, alice, request({ prompt: 'login' }, pkce));
      expect([302, 303]).toContain(done.status);
      const after = await idTokenFrom(done, pkce);
      expect(after.auth_time as number).toBeGreaterThan(before.auth_time as number);
    });

    /** Pushes an OpenID request for `target` (RFC 9126) and returns the /authorize URL that names it. */
    async function pushed(target: RegisteredClientWithMethod, params: Record<string, string>, pkce = newPkce()): Promise<string> {
      const response = await fetch(app.url('/par'), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(target.clientId, target.clientSecret!) },
        body: new URLSearchParams({ response_type: 'code', redirect_uri: target.redirectUri, scope: 'openid notes:read', state: 'xyz', code_challenge: pkce.challenge, code_challenge_method: 'S256', ...params }),
      });
      expect(response.status).toBe(201);
      const { request_uri: requestUri } = (await response.json()) as { request_uri: string };
      return `/authorize?${new URLSearchParams({ client_id: target.clientId, request_uri: requestUri })}`;
    }

    /** Signs `user` in on the login page `login` and follows the way back: the page /authorize answers then. */
    async function signInOn(browser: Browser, login: Page, user: TestUser): Promise<Page> {
      expect(isLoginPage(login)).toBe(true);
      const signedIn = await browser.submit(login, '/login', { username: user.username, password: user.password });
      return browser.get(signedIn.location!);
    }

    it.each([
      ['prompt=login', { prompt: 'login' }],
      ['prompt=select_account', { prompt: 'select_account' }],
      ['max_age=0', { max_age: '0' }],
    ])('a pushed request with %s: the parameters come back unchanged after the sign-in, and that one sign-in answers them with a code', async (_case, params) => {
      const browser = await signedIn(alice);
      const pkce = newPkce();
      const url = await pushed(client, params, pkce);
      const back = await signInOn(browser, await browser.get(url), alice);
      expect(back.status).toBe(302);
      expect(redirectParams(back).get('code')).toMatch(/^lk_ac_/);
      expect((await idTokenFrom(back, pkce)).auth_time).toEqual(expect.any(Number));
    });

    it('a client registered with default_max_age 0: each request asks for one sign-in, which answers it', async () => {
      const strict = await app.createClient({ redirectUris: ['https://rp.example/strict'], scope: 'notes:read', openId: { default_max_age: 0 } as never });
      const browser = new Browser(app.baseUrl);
      const requestFor = (pkce = newPkce()) => authorizeUrl(strict, { scope: 'openid', state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256' });
      const url = requestFor();
      const consent = await signInOn(browser, await browser.get(url), alice);
      const first = isConsentPage(consent) ? await browser.submit(consent, '/consent', { decision: 'allow' }) : consent;
      expect(redirectParams(first).get('code')).toMatch(/^lk_ac_/);
      // The next request of the client asks again (its max_age is 0), and one sign-in answers it too.
      const next = requestFor();
      const second = await signInOn(browser, await browser.get(next), alice);
      expect(redirectParams(second).get('code')).toMatch(/^lk_ac_/);
    });

    it('the sign-in answers only the request that asked: the same prompt=login request opened again after its code asks again', async () => {
      const browser = await signedIn(alice);
      const url = request({ prompt: 'login' });
      const back = await signInOn(browser, await browser.get(url), alice);
      expect(redirectParams(back).get('code')).toMatch(/^lk_ac_/);
      expect(isLoginPage(await browser.get(url))).toBe(true);
    });

    it('coming back without signing in does not count: the login page again', async () => {
      const browser = await signedIn(alice);
      const url = await pushed(client, { prompt: 'login' });
      expect(isLoginPage(await browser.get(url))).toBe(true);
      expect(isLoginPage(await browser.get(url))).toBe(true);
    });

    it('prompt=consent shows the consent page even when consent was given', async () => {
      const browser = await signedIn(alice);
      expect(isConsentPage(await browser.get(request({ prompt: 'consent' })))).toBe(true);
    });

    it('the consent page says in words what an OpenID request asks for: who you are, your name and email address', async () => {
      const browser = new Browser(app.baseUrl);
      const login = await browser.get(request({ scope: 'openid profile email notes:read' }));
      const consent = await browser.get((await browser.submit(login, '/login', { username: bob.username, password: bob.password })).location!);
      expect(isConsentPage(consent)).toBe(true);
      const items = [...consent.body.matchAll(/<li><span>([^<]*)<\/span>/g)].map((match) => match[1]);
      expect(items.sort()).toEqual(['Know who you are when you sign in to it with this account', 'See your name, username and email address', 'See your notes']);
    });

    it('refuses an unknown prompt value with invalid_request', async () => {
      const page = await new Browser(app.baseUrl).get(request({ prompt: 'sometimes' }));
      expect(redirectParams(page).get('error')).toBe('invalid_request');
    });
  });

  describe('max_age', () => {
    it('oidcc-max-age-10000: a recent sign-in is enough, and the ID token says when it was', async () => {
      const browser = await signedIn(alice);
      const pkce = newPkce();
      const page = await browser.get(request({ max_age: '10000' }, pkce));
      expect(page.status).toBe(302);
      expect(typeof (await idTokenFrom(page, pkce)).auth_time).toBe('number');
    });

    it('oidcc-max-age-1: an older sign-in makes the person sign in again', async () => {
      const browser = await signedIn(alice);
      const later = new Date(Date.now() + 5_000);
      jest.spyOn(app.clock, 'now').mockImplementation(() => later);
      expect(isLoginPage(await browser.get(request({ max_age: '1' })))).toBe(true);
    });

    it('with prompt=none, an older sign-in is login_required', async () => {
      const browser = await signedIn(alice);
      const later = new Date(Date.now() + 5_000);
      jest.spyOn(app.clock, 'now').mockImplementation(() => later);
      expect(redirectParams(await browser.get(request({ max_age: '1', prompt: 'none' }))).get('error')).toBe('login_required');
    });

    it('refuses a max_age that is not a number of seconds', async () => {
      expect(redirectParams(await new Browser(app.baseUrl).get(request({ max_age: '-1' }))).get('error')).toBe('invalid_request');
    });
  });

  describe('login_hint and id_token_hint', () => {
    it('oidcc-login-hint: pre-fills the username on the sign-in form', async () => {
      const page = await new Browser(app.baseUrl).get(request({ login_hint: 'alice-oidc' }));
      expect(isLoginPage(page)).toBe(true);
      expect(page.body).toMatch(/name="username"[^>]*value="alice-oidc"|value="alice-oidc"[^>]*name="username"/);
    });

    it('oidcc-id-token-hint: prompt=none with an ID token of the signed-in person issues a code', async () => {
      const browser = await signedIn(alice);
      const pkce = newPkce();
      const earlier = await idTokenFrom(await browser.get(request({ prompt: 'none' }, pkce)), pkce);
      const hint = await (async () => {
        const again = newPkce();
        const page = await browser.get(request({ prompt: 'none' }, again));
        const code = redirectParams(page).get('code')!;
        const tokens = await tokenRequest(app, client, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: again.verifier });
        return tokens.body.id_token as string;
      })();
      const page = await browser.get(request({ prompt: 'none', id_token_hint: hint }));
      expect(redirectParams(page).get('code')).toMatch(/^lk_ac_/);
      expect(decodeJwt(hint).sub).toBe(earlier.sub);
    });

    it('an ID token of someone else with prompt=none is login_required', async () => {
      const bobs = await signedIn(bob);
      const pkce = newPkce();
      const page = await bobs.get(request({ prompt: 'none' }, pkce));
      const code = redirectParams(page).get('code')!;
      const hint = (await tokenRequest(app, client, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier })).body.id_token as string;
      const alices = await signedIn(alice);
      expect(redirectParams(await alices.get(request({ prompt: 'none', id_token_hint: hint }))).get('error')).toBe('login_required');
    });

    it('a hint that is not an ID token we issued is invalid_request', async () => {
      const browser = await signedIn(alice);
      const forged = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"x"}').toString('base64url')}.`;
      expect(redirectParams(await browser.get(request({ prompt: 'none', id_token_hint: forged }))).get('error')).toBe('invalid_request');
    });
  });

  describe('oidcc-unknown-parameters', () => {
    it('ignores parameters it does not know (RFC 6749 §3.1)', async () => {
      const browser = await signedIn(alice);
      const page = await browser.get(request({ prompt: 'none', display: 'page', claims_locales: 'en', acr_values: 'x', ui_locales: 'fr en', extra: 'ignored' }));
      expect(redirectParams(page).get('code')).toMatch(/^lk_ac_/);
    });

    it('ignores scope values it does not understand in an OpenID request (Core §3.1.2.1): address, phone, another provider\'s own; the code carries only what was granted', async () => {
      const browser = await signedIn(alice);
      const pkce = newPkce();
      const page = await browser.get(request({ prompt: 'none', scope: 'openid address phone notes:read urn:example:custom' }, pkce));
      expect(redirectParams(page).get('code')).toMatch(/^lk_ac_/);
      const code = redirectParams(page).get('code')!;
      const tokens = await tokenRequest(app, client, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier });
      expect((tokens.body.scope as string).split(' ').sort()).toEqual(['notes:read', 'openid']);
    });

    it('still refuses a scope it knows but the client may not have, and unknown scopes outside OpenID requests (RFC 6749 §4.1.2.1)', async () => {
      const browser = await signedIn(alice);
      expect(redirectParams(await browser.get(request({ scope: 'openid notes:write' }))).get('error')).toBe('invalid_scope');
      expect(redirectParams(await browser.get(request({ scope: 'notes:read address' }))).get('error')).toBe('invalid_scope');
    });
  });
});
