/**
 * Attack (issue 30, finding 1): skipping the sign-in a request asked for through the consent form.
 *
 * A person is signed in and has consented to the client before. A request with prompt=login,
 * max_age=0 or an id_token_hint naming someone else shows the sign-in page, which carries the
 * session's csrf_token. The same browser then posts POST /consent with that token and the request
 * instead of signing in. OpenID Connect Core §3.1.2.1 says the server "MUST attempt to actively
 * re-authenticate": the consent form must answer with the sign-in page and write no code, for a
 * request in the query and for a pushed one (RFC 9126) alike. Through the sign-in form the same
 * request ends with a code whose ID token carries the new sign-in's auth_time.
 */
import { jest } from '@jest/globals';
import { decodeJwt } from 'jose';
import { Browser, hiddenFields, isConsentPage, isLoginPage, type Page } from '../helpers/browser.js';
import { authorizeAsUser, authorizeUrl, basicAuth, newPkce, redirectParams, tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClientWithMethod, type TestUser } from '../helpers/test-app.js';

/** How far the clock moves between the first sign-in and the request that asks for another. */
const LATER_MS = 120_000;

describe('Re-authentication cannot be skipped through the consent form (Core §3.1.2.1)', () => {
  let app: TestApp;
  let client: RegisteredClientWithMethod;
  let alice: TestUser;
  let bob: TestUser;
  /** An ID token the client holds for bob: the id_token_hint that names someone other than alice. */
  let bobsIdToken: string;

  const params = (extra: Record<string, string>, pkce: ReturnType<typeof newPkce>) => ({
    response_type: 'code',
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
    scope: 'openid notes:read',
    state: 'xyz',
    code_challenge: pkce.challenge,
    code_challenge_method: 'S256',
    ...extra,
  });

  /** The /authorize URL of the request: in the query, or pushed first (RFC 9126) and named by its request_uri. */
  async function requestUrl(how: 'query' | 'pushed', extra: Record<string, string>, pkce: ReturnType<typeof newPkce>): Promise<string> {
    if (how === 'query') return authorizeUrl(client, params(extra, pkce));
    const response = await fetch(app.url('/par'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(client.clientId, client.clientSecret!) },
      body: new URLSearchParams(params(extra, pkce)),
    });
    expect(response.status).toBe(201);
    const { request_uri: requestUri } = (await response.json()) as { request_uri: string };
    return `/authorize?${new URLSearchParams({ client_id: client.clientId, request_uri: requestUri })}`;
  }

  /** `user` signs in and consents to the client's usual request; returns the browser and the ID token's claims. */
  async function signedIn(user: TestUser): Promise<{ browser: Browser; idToken: string; claims: Record<string, unknown> }> {
    const browser = new Browser(app.baseUrl);
    const pkce = newPkce();
    const page = await authorizeAsUser(browser, user, await requestUrl('query', {}, pkce));
    const idToken = await idTokenFrom(page, pkce);
    return { browser, idToken, claims: decodeJwt(idToken) };
  }

  async function idTokenFrom(page: Page, pkce: ReturnType<typeof newPkce>): Promise<string> {
    expect([302, 303]).toContain(page.status);
    const code = redirectParams(page).get('code');
    expect(code).toMatch(/^lk_ac_/);
    const tokens = await tokenRequest(app, client, { grant_type: 'authorization_code', code: code!, redirect_uri: client.redirectUri, code_verifier: pkce.verifier });
    expect(tokens.status).toBe(200);
    return tokens.body.id_token as string;
  }

  const codeCount = async (): Promise<number> => Number((await app.dataSource.query('SELECT COUNT(*) AS n FROM authorization_codes'))[0].n);

  beforeAll(async () => {
    app = await TestApp.start({ ISSUER: 'https://auth.example.test' });
    client = await app.createClient({ redirectUris: ['https://rp.example/cb'], scope: 'notes:read', grantTypes: ['authorization_code', 'refresh_token'] as never });
    alice = await app.createUser('alice-reauth');
    bob = await app.createUser('bob-reauth');
    bobsIdToken = (await signedIn(bob)).idToken;
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(async () => app?.stop());

  /** The three ways a request asks for a sign-in while alice is signed in and has consented. */
  const asks: [string, () => Record<string, string>][] = [
    ['prompt=login', () => ({ prompt: 'login' })],
    ['max_age=0', () => ({ max_age: '0' })],
    ['an id_token_hint naming another person', () => ({ id_token_hint: bobsIdToken })],
  ];
  const cases = (['query', 'pushed'] as const).flatMap((how) => asks.map(([name, extra]) => [`${name} (${how === 'query' ? 'in the query' : 'pushed'})`, how, extra] as const));

  /** Alice, signed in two minutes ago, opens the request: the sign-in page with its csrf_token. */
  async function signInPageFor(how: 'query' | 'pushed', extra: Record<string, string>, pkce: ReturnType<typeof newPkce>) {
    const alices = await signedIn(alice);
    const later = new Date(Date.now() + LATER_MS);
    jest.spyOn(app.clock, 'now').mockImplementation(() => later);
    const login = await alices.browser.get(await requestUrl(how, extra, pkce));
    expect(isLoginPage(login)).toBe(true);
    return { ...alices, login, later };
  }

  describe.each(cases)('%s', (_name, how, extra) => {
    it('the consent form posted with the sign-in page\'s csrf_token answers with the sign-in page, and no code is written', async () => {
      const pkce = newPkce();
      const { browser, login } = await signInPageFor(how, extra(), pkce);
      const rawQuery = login.body.match(/name="return_to" value="\/authorize\?([^"]*)"/)![1].replace(/&amp;/g, '&');
      const before = await codeCount();
      for (const decision of ['allow', 'deny']) {
        const answer = await browser.post('/consent', { csrf_token: hiddenFields(login.body, '/login').csrf_token, authorization_request: rawQuery, decision });
        expect(answer.location).toBeUndefined();
        expect(isLoginPage(answer)).toBe(true);
      }
      expect(await codeCount()).toBe(before);
    });

    it('the sign-in form answers it: a code whose ID token carries the new sign-in\'s auth_time', async () => {
      const pkce = newPkce();
      const { browser, login, claims, later } = await signInPageFor(how, extra(), pkce);
      // The hint names bob: he is the one who signs in; otherwise alice signs in again.
      const who = extra().id_token_hint ? bob : alice;
      const signedIn = await browser.submit(login, '/login', { username: who.username, password: who.password });
      expect(signedIn.status).toBe(303);
      let back = await browser.get(signedIn.location!);
      // Bob has not consented in this browser's request before: the consent form, answered after the sign-in, issues the code.
      if (isConsentPage(back)) back = await browser.submit(back, '/consent', { decision: 'allow' });
      const fresh = decodeJwt(await idTokenFrom(back, pkce));
      expect(fresh.auth_time).toBe(Math.floor(later.getTime() / 1000));
      expect(fresh.auth_time as number).toBeGreaterThan(claims.auth_time as number);
      expect(fresh.sub).toBe(who === bob ? decodeJwt(bobsIdToken).sub : claims.sub);
    });
  });

  it('prompt=login consent: the consent form that follows the new sign-in is answered with a code carrying its auth_time', async () => {
    const pkce = newPkce();
    const { browser, login, later } = await signInPageFor('query', { prompt: 'login consent' }, pkce);
    const signedIn = await browser.submit(login, '/login', { username: alice.username, password: alice.password });
    const consent = await browser.get(signedIn.location!);
    expect(isConsentPage(consent)).toBe(true);
    const back = await browser.submit(consent, '/consent', { decision: 'allow' });
    expect(decodeJwt(await idTokenFrom(back, pkce)).auth_time).toBe(Math.floor(later.getTime() / 1000));
  });

  it('a consent form for an id_token_hint that is not an ID token of ours is refused at the client, with no code', async () => {
    const { browser } = await signedIn(alice);
    const home = hiddenFields((await browser.get('/account')).body, '/logout');
    const rawQuery = new URLSearchParams(params({ id_token_hint: 'not.a.token' }, newPkce())).toString();
    const before = await codeCount();
    const answer = await browser.post('/consent', { csrf_token: home.csrf_token, authorization_request: rawQuery, decision: 'allow' });
    expect(redirectParams(answer).get('error')).toBe('invalid_request');
    expect(redirectParams(answer).get('code')).toBeNull();
    expect(await codeCount()).toBe(before);
  });
});
