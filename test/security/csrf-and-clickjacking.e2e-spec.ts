/**
 * Threat model, the pages (issue 7): a site the person visits must not be able to sign them in
 * (login CSRF), approve or deny on their behalf (consent CSRF), or frame the pages to trick a
 * click (clickjacking). Two layers stand in the way of a forged form: the session's synchronizer
 * token, and the browser's Fetch Metadata / Origin, checked on every form route.
 */
import { Browser, hiddenFields, isConsentPage, isLoginPage, sessionCookie, type Page } from '../helpers/browser.js';
import { authorizeAsUser, authorizeUrl, newPkce } from '../helpers/oauth-flow.js';
import { enrolFrom, signInWithPassword } from '../helpers/second-factor.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';
import { keyShownOn, totpCode } from '../helpers/totp.js';
import { withEnv } from '../helpers/with-env.js';

function cookieAttributes(setCookie: string): string[] {
  return setCookie
    .split(';')
    .slice(1)
    .map((a) => a.trim().toLowerCase());
}

/** How a forged submission differs from the genuine one. */
interface Forgery {
  /** The form fields as the forger sends them, from the genuine ones and another session's token. */
  fields: (genuine: Record<string, string>, foreignToken: string) => Record<string, string>;
  headers?: Record<string, string>;
  /** Drop the session cookie (a victim with no session yet, or a request that does not carry it). */
  noCookie?: boolean;
  /** The path the form posts to, when not the canonical one. */
  path?: (action: string) => string;
}

const without = (fields: Record<string, string>, name: string): Record<string, string> => Object.fromEntries(Object.entries(fields).filter(([n]) => n !== name));

const FORGERIES: [string, Forgery][] = [
  ['without the CSRF field', { fields: (g) => without(g, 'csrf_token') }],
  ['with an empty CSRF token', { fields: (g) => ({ ...g, csrf_token: '' }) }],
  ['with a made-up CSRF token', { fields: (g) => ({ ...g, csrf_token: 'A'.repeat(43) }) }],
  ["with another session's valid CSRF token", { fields: (g, foreign) => ({ ...g, csrf_token: foreign }) }],
  ['with the right token and a prefix of it', { fields: (g) => ({ ...g, csrf_token: g.csrf_token.slice(0, 20) }) }],
  ['without the session cookie', { fields: (g) => g, noCookie: true }],
  ['from a cross-site page (Sec-Fetch-Site: cross-site)', { fields: (g) => g, headers: { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' } }],
  ['from a same-site page (Sec-Fetch-Site: same-site)', { fields: (g) => g, headers: { 'sec-fetch-site': 'same-site', origin: 'https://sub.127.0.0.1' } }],
  ['from another Origin (no Sec-Fetch-Site)', { fields: (g) => g, headers: { origin: 'https://evil.example' } }],
  ['from an opaque origin (Origin: null)', { fields: (g) => g, headers: { origin: 'null' } }],
  ['cross-site, to a percent-encoded path the router decodes', { fields: (g) => g, headers: { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }, path: (a) => `/%${a.charCodeAt(1).toString(16)}${a.slice(2)}` }],
];

describe('browser-side threats', () => {
  describe('with the default (development, http) configuration', () => {
    let app: TestApp;
    let client: RegisteredClient;
    let user: TestUser;

    beforeAll(async () => {
      app = await TestApp.start();
      client = await app.createClient({ name: 'Client', redirectUris: ['https://client.example/cb'], scope: 'notes:read' });
      user = await app.createUser();
    });
    afterAll(async () => app?.stop());

    function url(state = 's'): string {
      return authorizeUrl(client, { scope: 'notes:read', state, code_challenge: newPkce().challenge, code_challenge_method: 'S256' });
    }

    async function codeCount(): Promise<number> {
      return app.dataSource.createQueryBuilder().from('authorization_codes', 'c').getCount();
    }

    /** A valid CSRF token of a session other than the victim's (the attacker's own). */
    async function foreignToken(action: string): Promise<string> {
      const attacker = new Browser(app.baseUrl);
      const page = await attacker.get(url('attacker'));
      if (action === '/consent') {
        const person = await app.createUser();
        const afterLogin = await attacker.submit(page, '/login', { username: person.username, password: person.password });
        const consent = await attacker.get(afterLogin.location!);
        return hiddenFields(consent.body, '/consent').csrf_token;
      }
      return hiddenFields(page.body, '/login').csrf_token;
    }

    /** Posts `form` like a browser would, or forged as `forgery` says. */
    async function post(browser: Browser, action: string, genuine: Record<string, string>, forgery?: Forgery): Promise<Page> {
      if (!forgery) return browser.post(action, genuine);
      const fields = forgery.fields(genuine, await foreignToken(action));
      const target = forgery.path ? forgery.path(action) : action;
      if (forgery.noCookie) return new Browser(app.baseUrl).post(target, fields, forgery.headers);
      return browser.post(target, fields, forgery.headers);
    }

    describe('RFC 6819 §4.4.1.8, RFC 9700 §4.7, RFC 6749 §10.12: CSRF on POST /login (login CSRF)', () => {
      /** A victim's browser at the login page of an authorization request. */
      async function atLogin(): Promise<{ browser: Browser; genuine: Record<string, string> }> {
        const browser = new Browser(app.baseUrl);
        const page = await browser.get(url());
        expect(isLoginPage(page)).toBe(true);
        return { browser, genuine: { ...hiddenFields(page.body, '/login'), username: user.username, password: user.password } };
      }

      it('the genuine form signs in (the control: each case below changes one thing)', async () => {
        const { browser, genuine } = await atLogin();
        const reply = await post(browser, '/login', genuine);
        expect(reply.status).toBe(303);
        expect(isConsentPage(await browser.get(reply.location!))).toBe(true);
      });

      it('the genuine form from the same origin, as a browser labels it, signs in', async () => {
        const { browser, genuine } = await atLogin();
        const origin = new URL(app.baseUrl).origin;
        expect((await browser.post('/login', genuine, { 'sec-fetch-site': 'same-origin', origin })).status).toBe(303);
        const other = await atLogin();
        expect((await other.browser.post('/login', other.genuine, { origin })).status).toBe(303);
      });

      it.each(FORGERIES)('%s → refused with 403, and no session is created', async (_, forgery) => {
        const { browser, genuine } = await atLogin();
        const reply = await post(browser, '/login', genuine, forgery);
        expect(reply.status).toBe(403);
        expect(reply.location).toBeUndefined();
        // The victim's browser is still not signed in: the authorization request shows the login page again.
        expect(isLoginPage(await browser.get(url()))).toBe(true);
      });
    });

    describe('RFC 6819 §4.4.1.8, RFC 9700 §4.7, RFC 6749 §10.12: CSRF on POST /consent', () => {
      /** A signed-in victim looking at the consent page. */
      async function atConsent(): Promise<{ browser: Browser; genuine: Record<string, string> }> {
        const person = await app.createUser();
        const browser = new Browser(app.baseUrl);
        const login = await browser.get(url());
        const afterLogin = await browser.submit(login, '/login', { username: person.username, password: person.password });
        const consent = await browser.get(afterLogin.location!);
        expect(isConsentPage(consent)).toBe(true);
        return { browser, genuine: { ...hiddenFields(consent.body, '/consent'), decision: 'allow' } };
      }

      it('the genuine Allow issues a code (the control)', async () => {
        const { browser, genuine } = await atConsent();
        const before = await codeCount();
        const reply = await post(browser, '/consent', genuine);
        expect(reply.status).toBe(303);
        expect(new URL(reply.location!).searchParams.get('code')).toMatch(/^lk_ac_/);
        expect(await codeCount()).toBe(before + 1);
      });

      it.each(FORGERIES)('%s → refused with 403, no code, no consent recorded', async (_, forgery) => {
        const { browser, genuine } = await atConsent();
        const before = await codeCount();
        const reply = await post(browser, '/consent', genuine, forgery);
        expect(reply.status).toBe(403);
        expect(reply.location).toBeUndefined();
        expect(await codeCount()).toBe(before);
        // Nothing was approved: the same request still asks for consent.
        expect(isConsentPage(await browser.get(url()))).toBe(true);
      });

      it.each(FORGERIES.slice(0, 6))('a forged Deny %s → refused with 403, no redirect', async (_, forgery) => {
        const { browser, genuine } = await atConsent();
        const reply = await post(browser, '/consent', { ...genuine, decision: 'deny' }, forgery);
        expect(reply.status).toBe(403);
        expect(reply.location).toBeUndefined();
      });

      it('consent cannot be given with GET (a link or an image cannot approve)', async () => {
        const { browser, genuine } = await atConsent();
        const before = await codeCount();
        const reply = await browser.get(`/consent?${new URLSearchParams(genuine)}`);
        expect([404, 405]).toContain(reply.status);
        expect(reply.location).toBeUndefined();
        expect(await codeCount()).toBe(before);
      });
    });

    describe('RFC 9700 §4.7: every form that reads the session cookie is checked with Fetch Metadata (issue 43, finding 7)', () => {
      const crossSite = { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' };

      /** A form of a signed-in person's page, ready to post: the browser, the person and the fields (the page's own CSRF token among them). */
      interface OpenForm {
        browser: Browser;
        userId: string;
        fields: Record<string, string>;
      }

      async function idOf(person: TestUser): Promise<string> {
        const row = (await app.dataSource.createQueryBuilder().select('u.id', 'id').from('users', 'u').where('u.username = :username', { username: person.username }).getRawOne()) as { id: string };
        return row.id;
      }

      /** A person who just turned one-time codes on, signed in (recently, with both factors) in `browser`. */
      async function enrolledPerson(): Promise<{ person: TestUser; browser: Browser; userId: string; recoveryCodes: string[] }> {
        const person = await app.createUser();
        const browser = new Browser(app.baseUrl);
        await signInWithPassword(browser, person);
        const { recoveryCodes } = await enrolFrom(browser, await browser.get('/account/one-time-codes'), Date.now());
        return { person, browser, userId: await idOf(person), recoveryCodes };
      }

      /** Everything of the person these forms can change: one-time codes, recovery codes, sessions. */
      async function rowsOf(userId: string): Promise<unknown[]> {
        const rows = (table: string, columns: string[]) =>
          app.dataSource.createQueryBuilder().select(columns.map((c) => `t.${c}`)).from(table, 't').where('t.user_id = :userId', { userId }).orderBy(`t.${columns[0]}`).getRawMany();
        return [await rows('totp_factors', ['sealed_secret', 'last_used_step']), await rows('recovery_codes', ['code_hash', 'used_at']), await rows('sessions', ['id', 'ended_at'])];
      }

      const FORMS: [string, () => Promise<OpenForm>][] = [
        ['/login/code', async () => {
          const { person, userId, recoveryCodes } = await enrolledPerson();
          const browser = new Browser(app.baseUrl);
          expect((await signInWithPassword(browser, person)).location).toBe('/login/code');
          const page = await browser.get('/login/code');
          return { browser, userId, fields: { ...hiddenFields(page.body, '/login/code'), code: recoveryCodes[0] } };
        }],
        ['/account/one-time-codes', async () => {
          const person = await app.createUser();
          const browser = new Browser(app.baseUrl);
          await signInWithPassword(browser, person);
          const enrol = await browser.get('/account/one-time-codes');
          return { browser, userId: await idOf(person), fields: { ...hiddenFields(enrol.body, '/account/one-time-codes'), code: totpCode(keyShownOn(enrol)) } };
        }],
        ['/account/one-time-codes/remove', async () => {
          const { browser, userId } = await enrolledPerson();
          return { browser, userId, fields: hiddenFields((await browser.get('/account')).body, '/account/one-time-codes/remove') };
        }],
        ['/account/recovery-codes', async () => {
          const { browser, userId } = await enrolledPerson();
          return { browser, userId, fields: hiddenFields((await browser.get('/account')).body, '/account/recovery-codes') };
        }],
        ['/session/end/confirm', async () => {
          const person = await app.createUser();
          const browser = new Browser(app.baseUrl);
          await signInWithPassword(browser, person);
          const confirm = await browser.get('/session/end');
          return { browser, userId: await idOf(person), fields: { ...hiddenFields(confirm.body, '/session/end/confirm'), decision: 'sign_out' } };
        }],
      ];

      it.each(FORMS)("POST %s from a cross-site page, even with the page's own CSRF token → 403, and nothing changed", async (action, open) => {
        const { browser, userId, fields } = await open();
        const before = await rowsOf(userId);
        const forged = await browser.post(action, fields, crossSite);
        expect(forged.status).toBe(403);
        expect(forged.location).toBeUndefined();
        expect(await rowsOf(userId)).toEqual(before);
        // The control: the very same form from the page itself goes through, so the 403 was the origin's.
        const genuine = await browser.post(action, fields, { 'sec-fetch-site': 'same-origin', origin: new URL(app.baseUrl).origin });
        expect(genuine.status).toBeLessThan(400);
        expect(await rowsOf(userId)).not.toEqual(before);
      });
    });

    describe('RFC 6819 §4.4.1.9, RFC 9700 §4.16: clickjacking', () => {
      const pages: [string, (app: TestApp) => Promise<Page>, number][] = [
        ['the login page', async () => new Browser(app.baseUrl).get(url()), 200],
        ['the login page after a wrong password', async () => {
          const browser = new Browser(app.baseUrl);
          const page = await browser.get(url());
          return browser.submit(page, '/login', { username: user.username, password: 'wrong password' });
        }, 401],
        ['the consent page', async () => {
          const browser = new Browser(app.baseUrl);
          const page = await browser.get(url());
          const afterLogin = await browser.submit(page, '/login', { username: user.username, password: user.password });
          return browser.get(afterLogin.location!);
        }, 200],
        ['the error page of an unregistered redirect URI', async () => new Browser(app.baseUrl).get(authorizeUrl(client, { redirect_uri: 'https://evil.example/cb' })), 400],
        ['the error page of a forged form', async () => new Browser(app.baseUrl).post('/login', { username: 'x', password: 'y' }), 403],
        ['the home page', async () => new Browser(app.baseUrl).get('/'), 200],
        ['the account page of a signed-in person', async () => {
          const browser = new Browser(app.baseUrl);
          await authorizeAsUser(browser, user, url());
          return browser.get('/account');
        }, 200],
      ];

      it.each(pages)('%s sends X-Frame-Options: DENY and CSP frame-ancestors \'none\'', async (_, open, status) => {
        const page = await open(app);
        expect(page.status).toBe(status);
        expect(page.headers.get('content-type')).toMatch(/^text\/html/);
        expect(page.headers.get('x-frame-options')).toBe('DENY');
        const directives = (page.headers.get('content-security-policy') ?? '').split(';').map((d) => d.trim());
        expect(directives).toContain("frame-ancestors 'none'");
      });
    });

    describe('RFC 6819 §5.3.5 / RFC 6749 §10.12: the session cookie', () => {
      it('is HttpOnly, SameSite=Lax and Path=/, and not Secure over plain http (development)', async () => {
        const page = await new Browser(app.baseUrl).get(url());
        const cookie = sessionCookie(page);
        expect(cookie).toBeDefined();
        const attributes = cookieAttributes(cookie!);
        expect(attributes).toContain('httponly');
        expect(attributes).toContain('samesite=lax');
        expect(attributes).toContain('path=/');
        expect(attributes).not.toContain('secure');
      });

      it('a new session is started at sign-in: the pre-login cookie is replaced and its CSRF token no longer works', async () => {
        const person = await app.createUser();
        const browser = new Browser(app.baseUrl);
        const login = await browser.get(url());
        const before = sessionCookie(login)!.split(';')[0];
        const oldToken = hiddenFields(login.body, '/login').csrf_token;
        const afterLogin = await browser.submit(login, '/login', { username: person.username, password: person.password });
        const after = sessionCookie(afterLogin);
        expect(after).toBeDefined();
        expect(after!.split(';')[0]).not.toBe(before);
        const consent = await browser.get(afterLogin.location!);
        const fields = hiddenFields(consent.body, '/consent');
        expect(fields.csrf_token).not.toBe(oldToken);
        const reply = await browser.post('/consent', { ...fields, csrf_token: oldToken, decision: 'allow' });
        expect(reply.status).toBe(403);
      });
    });
  });

  describe('RFC 6819 §5.3.5, RFC 6265 §4.1.2.5: in production over https (behind a trusted proxy)', () => {
    let app: TestApp;
    const https = { 'x-forwarded-proto': 'https' };

    beforeAll(async () => {
      app = await withEnv(
        { NODE_ENV: 'production', ISSUER: 'https://auth.example.test', SESSION_SECRET: 'a-session-secret-of-at-least-32-characters', TOKEN_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'), SIGNING_KEY_ENCRYPTION_KEY: Buffer.alloc(32, 8).toString('base64'), FACTOR_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'), ALLOW_UNSAFE: 'sqlite', TRUST_PROXY: '127.0.0.1' },
        () => TestApp.start(),
      );
    });
    afterAll(async () => app?.stop());

    it('the session cookie is Secure, HttpOnly and SameSite=Lax', async () => {
      const page = await new Browser(app.baseUrl).get('/login', https);
      expect(page.status).toBe(200);
      const attributes = cookieAttributes(sessionCookie(page)!);
      expect(attributes).toEqual(expect.arrayContaining(['secure', 'httponly', 'samesite=lax']));
    });

    it('a cross-site POST /login is refused there too', async () => {
      const browser = new Browser(app.baseUrl);
      const page = await browser.get('/login', https);
      const reply = await browser.post('/login', { ...hiddenFields(page.body, '/login'), username: 'x', password: 'y' }, { ...https, 'sec-fetch-site': 'cross-site' });
      expect(reply.status).toBe(403);
    });
  });
});
