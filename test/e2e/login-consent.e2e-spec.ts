import { jest } from '@jest/globals';
import { appConfig } from '../../src/config/app.config.js';
import { sessionConfig } from '../../src/config/session.config.js';
import { User } from '../../src/users/user.entity.js';
import { Browser, hiddenFields, isConsentPage, isLoginPage, SESSION_COOKIE, sessionCookie, type Page } from '../helpers/browser.js';
import { authorizeAsUser, authorizeUrl, newPkce, redirectParams } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';

const COOKIE = SESSION_COOKIE;

/** The attributes of every `<tag …>` in `html`, in document order. */
function tagsOf(html: string, tag: string): Record<string, string>[] {
  return [...html.matchAll(new RegExp(`<${tag}\\b([^>]*)>`, 'g'))].map((m) => {
    const attributes: Record<string, string> = {};
    for (const a of m[1].matchAll(/([a-zA-Z-]+)(?:="([^"]*)")?/g)) attributes[a[1]] = a[2] ?? '';
    return attributes;
  });
}

/** The inner HTML of the form posting to `action`. */
function formOf(html: string, action: string): string {
  const form = new RegExp(`<form\\b[^>]*action="${action}"[^>]*>([\\s\\S]*?)</form>`).exec(html);
  if (!form) throw new Error(`No form posting to ${action} on the page:\n${html}`);
  return form[1];
}

function cookieAttributes(setCookie: string): Set<string> {
  return new Set(setCookie.split(';').slice(1).map((a) => a.trim().toLowerCase()));
}

/** Logs in from the login page that `url` shows and returns the page /authorize shows next. */
async function logIn(browser: Browser, user: TestUser, url: string): Promise<{ login: Page; afterLogin: Page; next: Page }> {
  const login = await browser.get(url);
  expect(isLoginPage(login)).toBe(true);
  const afterLogin = await browser.submit(login, '/login', { username: user.username, password: user.password });
  expect(afterLogin.status).toBe(303);
  return { login, afterLogin, next: await browser.get(afterLogin.location!) };
}

describe('login and consent (RFC 6749 §3.1, §10.12; RFC 6819 §4.4.1.9)', () => {
  let app: TestApp;
  let issuer: string;
  let client: RegisteredClient;
  let wide: RegisteredClient;
  let publicClient: RegisteredClient;
  let user: TestUser;

  beforeAll(async () => {
    app = await TestApp.start();
    issuer = app.app.get(appConfig.KEY).issuer;
    client = await app.createClient({ name: 'Acme Notes', redirectUris: ['https://acme.example/cb'], scope: 'notes:read notes:write' });
    wide = await app.createClient({ name: 'Everything Viewer', redirectUris: ['https://wide.example/cb'], scope: 'notes:read notes:write photos:read photos:write' });
    publicClient = await app.createClient({ name: 'Pocket App', redirectUris: ['http://127.0.0.1:7000/cb'], scope: 'notes:read', isPublic: true });
    user = await app.createUser();
  });
  afterAll(async () => app?.stop());
  afterEach(() => jest.restoreAllMocks());

  async function codeCount(clientId: string): Promise<number> {
    return app.dataSource.createQueryBuilder().from('authorization_codes', 'c').where('c.client_id = :clientId', { clientId }).getCount();
  }

  /** A fresh user, logged in, looking at the consent page of `url`. */
  async function atConsent(url: string): Promise<{ browser: Browser; consent: Page; person: TestUser }> {
    const person = await app.createUser();
    const browser = new Browser(app.baseUrl);
    const { next } = await logIn(browser, person, url);
    expect(isConsentPage(next)).toBe(true);
    return { browser, consent: next, person };
  }

  describe('GET /authorize without a session shows the login page', () => {
    let page: Page;
    beforeAll(async () => {
      page = await new Browser(app.baseUrl).get(authorizeUrl(client, { scope: 'notes:read', state: 'xyz' }));
    });

    it('200 HTML with a POST form to /login that names the client', () => {
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.location).toBeUndefined();
      const forms = tagsOf(page.body, 'form').filter((f) => f.action === '/login');
      expect(forms).toHaveLength(1);
      expect(forms[0].method?.toLowerCase()).toBe('post');
      expect(page.body).toContain('Acme Notes');
    });

    it('has username and password inputs, each with its label', () => {
      const inputs = tagsOf(formOf(page.body, '/login'), 'input');
      const labels = tagsOf(page.body, 'label');
      for (const [name, type] of [
        ['username', 'text'],
        ['password', 'password'],
      ]) {
        const input = inputs.find((i) => i.name === name);
        expect(input).toBeDefined();
        expect(input!.type).toBe(type);
        expect(input!.id).toEqual(expect.stringMatching(/\S/));
        expect(labels.filter((l) => l.for === input!.id)).toHaveLength(1);
      }
      expect(inputs.find((i) => i.name === 'csrf_token')?.value).toEqual(expect.stringMatching(/^[A-Za-z0-9_-]{32,}$/));
    });

    it('cannot be framed and is not cached', () => {
      expect(page.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
      expect(page.headers.get('x-frame-options')).toBe('DENY');
      expect(page.headers.get('cache-control')).toBe('no-store');
    });

    it('GET /login shows the same form', async () => {
      const login = await new Browser(app.baseUrl).get('/login');
      expect(isLoginPage(login)).toBe(true);
      expect(login.headers.get('x-frame-options')).toBe('DENY');
    });
  });

  describe('POST /login', () => {
    it.each<[string, (u: TestUser) => Record<string, string>]>([
      ['a wrong password', (u) => ({ username: u.username, password: 'Wrong-password-123' })],
      ['an unknown username', () => ({ username: 'nobody-here', password: 'Wrong-password-123' })],
      ['an empty password', (u) => ({ username: u.username, password: '' })],
      ['no fields at all', () => ({})],
    ])('%s → 401 with an error message, and no session', async (_name, fields) => {
      const browser = new Browser(app.baseUrl);
      const url = authorizeUrl(client, { scope: 'notes:read' });
      const login = await browser.get(url);
      const failed = await browser.submit(login, '/login', fields(user));
      expect(failed.status).toBe(401);
      expect(failed.location).toBeUndefined();
      expect(failed.body).toMatch(/role="alert"[^>]*>[^<]*incorrect/);
      expect(failed.headers.get('x-frame-options')).toBe('DENY');
      // The form comes back, ready for a second try that still leads to the same request.
      expect(hiddenFields(failed.body, '/login').return_to).toBe(url);
      if (fields(user).password) expect(failed.body).not.toContain(fields(user).password);
      expect(isLoginPage(await browser.get(url))).toBe(true);
    });

    it('success → 303 to the authorization request, with a new HttpOnly, SameSite=Lax session cookie', async () => {
      const browser = new Browser(app.baseUrl);
      const url = authorizeUrl(client, { scope: 'notes:read', state: 'abc' });
      const { login, afterLogin } = await logIn(browser, user, url);
      expect(afterLogin.location).toBe(url);

      const setCookie = sessionCookie(afterLogin);
      expect(setCookie).toBeDefined();
      const attributes = cookieAttributes(setCookie!);
      expect(attributes).toContain('httponly');
      expect(attributes).toContain('samesite=lax');
      expect(attributes).toContain('path=/');
      // ISSUER is http here: Secure would stop a browser from ever sending it back.
      expect(attributes).not.toContain('secure');

      // Session fixation: login issues a different cookie from the one the login page set.
      const before = sessionCookie(login);
      expect(before).toBeDefined();
      expect(setCookie!.split(';')[0]).not.toBe(before!.split(';')[0]);
    });

    it('the session cookie is encrypted: neither the username, the user id nor the CSRF token can be read from it', async () => {
      const person = await app.createUser(`plain_${Math.random().toString(36).slice(2, 8)}`);
      const browser = new Browser(app.baseUrl);
      const { afterLogin, next } = await logIn(browser, person, authorizeUrl(client, { scope: 'notes:read' }));
      const value = sessionCookie(afterLogin)!.split(';')[0].slice(COOKIE.length + 1);
      const userId = (await app.dataSource.getRepository(User).findOneByOrFail({ username: person.username })).id;
      const csrf = hiddenFields(next.body, '/consent').csrf_token;
      const decoded = decodeURIComponent(value);
      const readable = [value, decoded, ...decoded.split(/[;.]/).flatMap((part) => [Buffer.from(part, 'base64').toString('latin1'), Buffer.from(part, 'base64url').toString('latin1')])];
      for (const secret of [person.username, userId, csrf]) {
        for (const text of readable) expect(text).not.toContain(secret);
      }
    });

    it('an already logged-in visitor of GET /login is sent home', async () => {
      const browser = new Browser(app.baseUrl);
      await logIn(browser, user, authorizeUrl(client, { scope: 'notes:read' }));
      const page = await browser.get('/login');
      expect(page.status).toBe(302);
      expect(page.location).toBe('/');
    });
  });

  describe('consent page', () => {
    it('names the client and says in words what each requested scope allows, and nothing more', async () => {
      const { consent } = await atConsent(authorizeUrl(wide, { scope: 'notes:read photos:write' }));
      expect(consent.body).toContain('Everything Viewer');
      expect(consent.body).toContain('See your notes');
      expect(consent.body).toContain('Create, change and delete your photos');
      expect(consent.body).not.toContain('See your photos');
      expect(consent.body).not.toContain('Create, change and delete your notes');
      expect(consent.body).toContain('wide.example');
    });

    it('has the form contract: <button name="decision" value="allow"> and value="deny" in a POST form to /consent', async () => {
      const { consent } = await atConsent(authorizeUrl(client, { scope: 'notes:read' }));
      expect(tagsOf(consent.body, 'form').find((f) => f.action === '/consent')?.method?.toLowerCase()).toBe('post');
      const buttons = tagsOf(formOf(consent.body, '/consent'), 'button').filter((b) => b.name === 'decision');
      expect(buttons.map((b) => b.value).sort()).toEqual(['allow', 'deny']);
      for (const button of buttons) expect(button.type ?? 'submit').toBe('submit');
      const fields = hiddenFields(consent.body, '/consent');
      expect(fields.csrf_token).toEqual(expect.stringMatching(/^[A-Za-z0-9_-]{32,}$/));
      expect(fields.authorization_request).toEqual(expect.stringContaining(`client_id=${client.clientId}`));
    });

    it('cannot be framed and is not cached', async () => {
      const { consent } = await atConsent(authorizeUrl(client, { scope: 'notes:read' }));
      expect(consent.headers.get('content-type')).toMatch(/^text\/html/);
      expect(consent.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
      expect(consent.headers.get('x-frame-options')).toBe('DENY');
      expect(consent.headers.get('cache-control')).toBe('no-store');
    });

    it("escapes the client's name", async () => {
      const evil = await app.createClient({ name: '<img src=x onerror=alert(1)>"Evil"', redirectUris: ['https://evil-name.example/cb'], scope: 'notes:read' });
      const { consent } = await atConsent(authorizeUrl(evil, { scope: 'notes:read' }));
      expect(consent.body).not.toContain('<img src=x');
      expect(consent.body).toContain('&lt;img src=x onerror=alert(1)&gt;');
    });

    it('Allow → redirect with a code; Deny → access_denied with state (RFC 6749 §4.1.2.1)', async () => {
      const { browser, consent } = await atConsent(authorizeUrl(client, { scope: 'notes:read', state: 'st-allow' }));
      const allowed = await browser.submit(consent, '/consent', { decision: 'allow' });
      expect(allowed.status).toBe(303);
      expect(redirectParams(allowed).get('code')).toMatch(/^lk_ac_/);
      expect(redirectParams(allowed).get('state')).toBe('st-allow');

      const denial = await atConsent(authorizeUrl(client, { scope: 'notes:read', state: 'st-deny' }));
      const denied = await denial.browser.submit(denial.consent, '/consent', { decision: 'deny' });
      expect(denied.status).toBe(303);
      expect(denied.location!.startsWith('https://acme.example/cb?')).toBe(true);
      expect(Object.fromEntries(redirectParams(denied))).toEqual({ error: 'access_denied', error_description: expect.any(String), state: 'st-deny', iss: issuer });
    });

    it('no decision, or an unknown one → 400 page, no code', async () => {
      const { browser, consent } = await atConsent(authorizeUrl(client, { scope: 'notes:read' }));
      const before = await codeCount(client.clientId);
      for (const fields of [{}, { decision: 'maybe' }] as Record<string, string>[]) {
        const page = await browser.submit(consent, '/consent', fields);
        expect(page.status).toBe(400);
        expect(page.location).toBeUndefined();
      }
      expect(await codeCount(client.clientId)).toBe(before);
    });

    it('a denial is not remembered: the next request asks again', async () => {
      const url = authorizeUrl(client, { scope: 'notes:read' });
      const { browser, consent } = await atConsent(url);
      await browser.submit(consent, '/consent', { decision: 'deny' });
      expect(isConsentPage(await browser.get(url))).toBe(true);
    });
  });

  describe('CSRF protection of the forms', () => {
    it.each<[string, (fields: Record<string, string>, other: string) => Record<string, string>]>([
      ['without csrf_token', ({ csrf_token: _, ...rest }) => rest],
      ['with a wrong csrf_token', (fields) => ({ ...fields, csrf_token: 'A'.repeat(43) })],
      ['with an empty csrf_token', (fields) => ({ ...fields, csrf_token: '' })],
      ["with another session's valid csrf_token", (fields, other) => ({ ...fields, csrf_token: other })],
    ])('POST /consent %s → 403, no code issued', async (_name, tamper) => {
      const { browser, consent } = await atConsent(authorizeUrl(client, { scope: 'notes:read' }));
      const other = hiddenFields((await new Browser(app.baseUrl).get('/login')).body, '/login').csrf_token;
      const before = await codeCount(client.clientId);
      const page = await browser.post('/consent', tamper({ ...hiddenFields(consent.body, '/consent'), decision: 'allow' }, other));
      expect(page.status).toBe(403);
      expect(page.location).toBeUndefined();
      expect(await codeCount(client.clientId)).toBe(before);
    });

    it.each<[string, (fields: Record<string, string>, other: string) => Record<string, string>]>([
      ['without csrf_token', ({ csrf_token: _, ...rest }) => rest],
      ['with a wrong csrf_token', (fields) => ({ ...fields, csrf_token: 'A'.repeat(43) })],
      ["with another session's valid csrf_token", (fields, other) => ({ ...fields, csrf_token: other })],
    ])('POST /login %s → 403, not logged in', async (_name, tamper) => {
      const browser = new Browser(app.baseUrl);
      const url = authorizeUrl(client, { scope: 'notes:read' });
      const login = await browser.get(url);
      const other = hiddenFields((await new Browser(app.baseUrl).get('/login')).body, '/login').csrf_token;
      const page = await browser.post('/login', tamper({ ...hiddenFields(login.body, '/login'), username: user.username, password: user.password }, other));
      expect(page.status).toBe(403);
      expect(page.location).toBeUndefined();
      expect(isLoginPage(await browser.get(url))).toBe(true);
    });

    it.each<[string, Record<string, string>]>([
      ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }],
      ['Sec-Fetch-Site: same-site', { 'sec-fetch-site': 'same-site' }],
      ['a foreign Origin', { origin: 'https://evil.example' }],
    ])('a cross-site POST /login (%s) with a valid token → 403, not logged in', async (_name, headers) => {
      const browser = new Browser(app.baseUrl);
      const url = authorizeUrl(client, { scope: 'notes:read' });
      const login = await browser.get(url);
      const page = await browser.post('/login', { ...hiddenFields(login.body, '/login'), username: user.username, password: user.password }, headers);
      expect(page.status).toBe(403);
      expect(page.location).toBeUndefined();
      expect(isLoginPage(await browser.get(url))).toBe(true);
    });

    it('a cross-site POST /consent with a valid token → 403, no code', async () => {
      const { browser, consent } = await atConsent(authorizeUrl(client, { scope: 'notes:read' }));
      const before = await codeCount(client.clientId);
      const page = await browser.post('/consent', { ...hiddenFields(consent.body, '/consent'), decision: 'allow' }, { 'sec-fetch-site': 'cross-site' });
      expect(page.status).toBe(403);
      expect(page.location).toBeUndefined();
      expect(await codeCount(client.clientId)).toBe(before);
    });

    it('a cross-site POST /logout → 403, still logged in', async () => {
      const url = authorizeUrl(client, { scope: 'notes:read' });
      const { browser, consent } = await atConsent(url);
      const page = await browser.post('/logout', hiddenFields(consent.body, '/logout'), { 'sec-fetch-site': 'cross-site' });
      expect(page.status).toBe(403);
      expect(isConsentPage(await browser.get(url))).toBe(true);
    });

    it('a cross-site GET /authorize (the client sending the browser here) is served', async () => {
      const page = await new Browser(app.baseUrl).get(authorizeUrl(client, { scope: 'notes:read' }), { 'sec-fetch-site': 'cross-site', origin: 'https://acme.example' });
      expect(isLoginPage(page)).toBe(true);
    });

    it('a same-origin POST (Sec-Fetch-Site: same-origin) with the right token is accepted', async () => {
      const { browser, consent } = await atConsent(authorizeUrl(client, { scope: 'notes:read' }));
      const page = await browser.post('/consent', { ...hiddenFields(consent.body, '/consent'), decision: 'allow' }, { 'sec-fetch-site': 'same-origin', origin: app.baseUrl });
      expect(page.status).toBe(303);
      expect(redirectParams(page).get('code')).toMatch(/^lk_ac_/);
    });
  });

  describe('the authorization_request carried by the consent form is validated again', () => {
    async function submitTampered(query: string): Promise<Page> {
      const { browser, consent } = await atConsent(authorizeUrl(client, { scope: 'notes:read', state: 'orig' }));
      return browser.submit(consent, '/consent', { authorization_request: query, decision: 'allow' });
    }

    it.each([
      ['an unregistered redirect_uri', (q: URLSearchParams) => q.set('redirect_uri', 'https://evil.example/cb')],
      ['an unknown client_id', (q: URLSearchParams) => q.set('client_id', 'no-such-client')],
      ['no client_id', (q: URLSearchParams) => q.delete('client_id')],
      ['a repeated redirect_uri', (q: URLSearchParams) => q.append('redirect_uri', 'https://evil.example/cb')],
    ])('%s → 400 page, no redirect, no code', async (_name, tamper) => {
      const query = new URLSearchParams(authorizeUrl(client, { scope: 'notes:read', state: 'orig' }).split('?')[1]);
      tamper(query);
      const before = await codeCount(client.clientId);
      const page = await submitTampered(query.toString());
      expect(page.status).toBe(400);
      expect(page.location).toBeUndefined();
      expect(page.body).not.toContain('evil.example');
      expect(await codeCount(client.clientId)).toBe(before);
    });

    it.each([
      ['a scope beyond the client registration', 'invalid_scope', (q: URLSearchParams) => q.set('scope', 'notes:read photos:read')],
      ['response_type=token', 'unsupported_response_type', (q: URLSearchParams) => q.set('response_type', 'token')],
      ['code_challenge_method=plain', 'invalid_request', (q: URLSearchParams) => (q.set('code_challenge', newPkce().verifier), q.set('code_challenge_method', 'plain'))],
      ['a repeated scope', 'invalid_request', (q: URLSearchParams) => q.append('scope', 'notes:write')],
    ])('%s → %s at the client, no code', async (_name, error, tamper) => {
      const query = new URLSearchParams(authorizeUrl(client, { scope: 'notes:read', state: 'orig' }).split('?')[1]);
      tamper(query);
      const before = await codeCount(client.clientId);
      const page = await submitTampered(query.toString());
      expect(page.status).toBe(303);
      expect(page.location!.startsWith('https://acme.example/cb?')).toBe(true);
      expect(redirectParams(page).get('error')).toBe(error);
      expect(redirectParams(page).get('state')).toBe('orig');
      expect(await codeCount(client.clientId)).toBe(before);
    });

    it("a public client's code_challenge removed → invalid_request, no code", async () => {
      const pkce = newPkce();
      const url = authorizeUrl(publicClient, { scope: 'notes:read', state: 'p', code_challenge: pkce.challenge, code_challenge_method: 'S256' });
      const { browser, consent } = await atConsent(url);
      const query = new URLSearchParams(hiddenFields(consent.body, '/consent').authorization_request);
      query.delete('code_challenge');
      query.delete('code_challenge_method');
      const page = await browser.submit(consent, '/consent', { authorization_request: query.toString(), decision: 'allow' });
      expect(redirectParams(page).get('error')).toBe('invalid_request');
      expect(await codeCount(publicClient.clientId)).toBe(0);
    });
  });

  describe('remembered consent (per user and client)', () => {
    it('same or narrower scope skips the consent page; a wider one asks again; what was allowed adds up', async () => {
      const first = authorizeUrl(wide, { scope: 'notes:read notes:write', state: '1' });
      const { browser, consent } = await atConsent(first);
      expect((await browser.submit(consent, '/consent', { decision: 'allow' })).status).toBe(303);

      for (const scope of ['notes:read notes:write', 'notes:write notes:read', 'notes:read', 'notes:write']) {
        const page = await browser.get(authorizeUrl(wide, { scope, state: 'again' }));
        expect(page.status).toBe(302);
        const params = redirectParams(page);
        expect(params.get('code')).toMatch(/^lk_ac_/);
        expect(params.get('state')).toBe('again');
        expect(params.get('iss')).toBe(issuer);
      }

      const wider = await browser.get(authorizeUrl(wide, { scope: 'notes:read photos:read' }));
      expect(isConsentPage(wider)).toBe(true);
      expect(wider.body).toContain('See your photos');
      // Omitting scope means the client's whole registered scope: wider too.
      expect(isConsentPage(await browser.get(authorizeUrl(wide, {})))).toBe(true);

      expect((await browser.submit(wider, '/consent', { decision: 'allow' })).status).toBe(303);
      expect((await browser.get(authorizeUrl(wide, { scope: 'notes:write photos:read' }))).status).toBe(302);
    });

    it('is kept per client and per user', async () => {
      const url = authorizeUrl(client, { scope: 'notes:read' });
      const { browser, consent, person } = await atConsent(url);
      await browser.submit(consent, '/consent', { decision: 'allow' });
      expect((await browser.get(url)).status).toBe(302);
      // Another client, same user and scope.
      expect(isConsentPage(await browser.get(authorizeUrl(wide, { scope: 'notes:read' })))).toBe(true);
      // Another user, same client and scope.
      const other = await atConsent(url);
      expect(other.person.username).not.toBe(person.username);
    });
  });

  describe('return_to after login', () => {
    it.each([
      'https://evil.example/',
      '//evil.example/authorize?x=1',
      '/\\evil.example',
      'javascript:alert(1)',
      '/authorize',
      '/authorized?x=1',
      '/login',
      ' /authorize?x=1',
      'https://evil.example/authorize?x=1',
    ])('%s is not followed: login continues at /', async (returnTo) => {
      const browser = new Browser(app.baseUrl);
      const login = await browser.get('/login');
      const page = await browser.post('/login', { ...hiddenFields(login.body, '/login'), return_to: returnTo, username: user.username, password: user.password });
      expect(page.status).toBe(303);
      expect(page.location).toBe('/');
    });

    it('/ and /authorize?… are followed', async () => {
      const url = authorizeUrl(client, { scope: 'notes:read', state: 'rt' });
      for (const returnTo of ['/', url]) {
        const browser = new Browser(app.baseUrl);
        const login = await browser.get('/login');
        const page = await browser.post('/login', { ...hiddenFields(login.body, '/login'), return_to: returnTo, username: user.username, password: user.password });
        expect(page.status).toBe(303);
        expect(page.location).toBe(returnTo);
      }
    });
  });

  describe('logout', () => {
    it('POST /logout with the form token ends the session: the next /authorize shows the login page', async () => {
      const url = authorizeUrl(client, { scope: 'notes:read' });
      const { browser, consent } = await atConsent(url);
      const out = await browser.submit(consent, '/logout');
      expect(out.status).toBe(303);
      expect(out.location).toBe('/');
      expect(isLoginPage(await browser.get(url))).toBe(true);
      expect((await browser.get('/account')).body).not.toContain('You are signed in');
    });

    it('POST /logout without the form token logs nobody out', async () => {
      const url = authorizeUrl(client, { scope: 'notes:read' });
      const { browser, consent } = await atConsent(url);
      const { csrf_token: _, ...withoutToken } = hiddenFields(consent.body, '/logout');
      await browser.post('/logout', withoutToken);
      expect(isConsentPage(await browser.get(url))).toBe(true);
    });
  });

  describe('session lifetime (SESSION_TTL_SECONDS)', () => {
    it('a session older than SESSION_TTL_SECONDS shows the login page again', async () => {
      const ttl = app.app.get(sessionConfig.KEY).ttlSeconds;
      expect(ttl).toBe(8 * 3600);
      const start = new Date(Math.floor(Date.now() / 1000) * 1000);
      const now = jest.spyOn(app.clock, 'now').mockReturnValue(start);
      const url = authorizeUrl(client, { scope: 'notes:read' });
      const { browser } = await atConsent(url);

      now.mockReturnValue(new Date(start.getTime() + ttl * 1000));
      expect(isConsentPage(await browser.get(url))).toBe(true);

      now.mockReturnValue(new Date(start.getTime() + (ttl + 1) * 1000));
      expect(isLoginPage(await browser.get(url))).toBe(true);
    });

    it('after expiry, logging in again works', async () => {
      const start = new Date(Math.floor(Date.now() / 1000) * 1000);
      const now = jest.spyOn(app.clock, 'now').mockReturnValue(start);
      const url = authorizeUrl(client, { scope: 'notes:read' });
      const person = await app.createUser();
      const browser = new Browser(app.baseUrl);
      await logIn(browser, person, url);
      now.mockReturnValue(new Date(start.getTime() + 9 * 3600 * 1000));
      const { next } = await logIn(browser, person, url);
      expect(isConsentPage(next)).toBe(true);
    });

    it('an expired session cannot approve a consent form it showed earlier', async () => {
      const start = new Date(Math.floor(Date.now() / 1000) * 1000);
      const now = jest.spyOn(app.clock, 'now').mockReturnValue(start);
      const { browser, consent } = await atConsent(authorizeUrl(client, { scope: 'notes:read' }));
      const before = await codeCount(client.clientId);
      now.mockReturnValue(new Date(start.getTime() + 9 * 3600 * 1000));
      const page = await browser.submit(consent, '/consent', { decision: 'allow' });
      expect(page.location).toBeUndefined();
      expect(isLoginPage(page)).toBe(true);
      expect(await codeCount(client.clientId)).toBe(before);
    });
  });
});

describe('login session over HTTPS (ISSUER=https://…)', () => {
  let app: TestApp;
  let saved: string | undefined;

  beforeAll(async () => {
    saved = process.env.ISSUER;
    app = await TestApp.start({ ISSUER: 'https://auth.example.test' });
  });
  afterAll(async () => {
    await app?.stop();
    if (saved === undefined) delete process.env.ISSUER;
    else process.env.ISSUER = saved;
  });

  it('marks the session cookie Secure (and still HttpOnly, SameSite=Lax)', async () => {
    const client = await app.createClient({ redirectUris: ['https://acme.example/cb'], scope: 'notes:read' });
    const user = await app.createUser();
    const browser = new Browser(app.baseUrl);
    const { login, afterLogin } = await logIn(browser, user, authorizeUrl(client, { scope: 'notes:read' }));
    for (const page of [login, afterLogin]) {
      const attributes = cookieAttributes(sessionCookie(page)!);
      expect(attributes).toContain('secure');
      expect(attributes).toContain('httponly');
      expect(attributes).toContain('samesite=lax');
    }
    const params = redirectParams(await authorizeAsUser(browser, user, authorizeUrl(client, { scope: 'notes:read' })));
    expect(params.get('iss')).toBe('https://auth.example.test');
  });
});

/**
 * In a describe of its own, with its own app: a server that fails on this request also throws an
 * uncaught error, which Jest charges to every test of the describe that is running.
 */
describe('return_to with characters a Location header cannot carry', () => {
  let app: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    app = await TestApp.start();
    user = await app.createUser();
  });
  afterAll(async () => app?.stop());

  it.each([
    ['a line break', '/authorize?x=1\r\nX-Injected: yes'],
    ['a character above U+00FF', '/authorize?x=\u20ac'],
  ])('%s is not followed either (no header injection, no 5xx, an answer)', async (_name, returnTo) => {
    // Plain fetch with a time limit: a server that chokes on the Location header never answers.
    const login = await fetch(app.url('/login'));
    const cookie = login.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
    const fields = { ...hiddenFields(await login.text(), '/login'), return_to: returnTo, username: user.username, password: user.password };
    const response = await fetch(app.url('/login'), {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
      signal: AbortSignal.timeout(5000),
    });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/');
    expect(response.headers.get('x-injected')).toBeNull();
  });
});
