import { jest } from '@jest/globals';
import { decodeJwt } from 'jose';
import { Browser, hiddenFields, isConsentPage, isLoginPage, type Page } from '../helpers/browser.js';
import { authorizeUrl, newPkce, redirectParams, tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';
import { keyShownOn, recoveryCodesShownOn, totpCode } from '../helpers/totp.js';

/**
 * Issue 33, one-time codes (RFC 6238) and recovery codes: enrolment on the account page, the code
 * asked after the password, amr and acr in the ID token. Codes are computed by the test's own
 * RFC 6238 implementation from the key the enrolment page shows.
 */
describe('second factor: one-time codes and recovery codes', () => {
  let app: TestApp;
  let client: RegisteredClient;
  /** The server's clock runs this far ahead of the real one: each test moves it on a step so that codes are fresh. */
  let offsetMs = 0;
  const now = () => Date.now() + offsetMs;
  const nextStep = () => {
    offsetMs += 30_000;
  };

  beforeAll(async () => {
    app = await TestApp.start();
    client = await app.createClient({ name: 'Acme Notes', redirectUris: ['https://acme.example/cb'], scope: 'notes:read' });
    jest.spyOn(app.clock, 'now').mockImplementation(() => new Date(now()));
  });
  afterAll(async () => app?.stop());

  async function signInWithPassword(browser: Browser, user: TestUser, returnTo = '/'): Promise<Page> {
    const login = await browser.get('/login');
    return browser.post('/login', { ...hiddenFields(login.body, '/login'), username: user.username, password: user.password, return_to: returnTo });
  }

  /** A person who signed in with a password and enrolled one-time codes; the key and the recovery codes they saw. */
  async function enrolledPerson(): Promise<{ user: TestUser; key: string; recoveryCodes: string[]; browser: Browser }> {
    const user = await app.createUser();
    const browser = new Browser(app.baseUrl);
    expect((await signInWithPassword(browser, user)).status).toBe(303);
    const enrol = await browser.get('/account/one-time-codes');
    const key = keyShownOn(enrol);
    const done = await browser.submit(enrol, '/account/one-time-codes', { code: totpCode(key, now()) });
    expect(done.status).toBe(200);
    return { user, key, recoveryCodes: recoveryCodesShownOn(done), browser };
  }

  async function userId(username: string): Promise<string> {
    const rows = (await app.dataSource.query(`SELECT "id" FROM "users" WHERE "username" = '${username}'`)) as { id: string }[];
    return rows[0].id;
  }

  describe('enrolment on the account page', () => {
    it('shows a QR code drawn as SVG and the key for typing, and stores nothing before a first right code', async () => {
      const user = await app.createUser();
      const browser = new Browser(app.baseUrl);
      await signInWithPassword(browser, user);
      const home = await browser.get('/account');
      expect(home.body).toContain('href="/account/one-time-codes"');
      const enrol = await browser.get('/account/one-time-codes');
      expect(enrol.status).toBe(200);
      expect(enrol.body).toMatch(/<figure class="qr"[^>]*><svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
      // No script and no outbound image: the page's policy allows neither.
      expect(enrol.body).not.toMatch(/<script|<img[^>]+src="http/);
      expect(keyShownOn(enrol)).toMatch(/^[A-Z2-7]{32}$/);
      expect(enrol.body).toMatch(/<label for="code">/);
      expect(enrol.body).toMatch(/<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code"/);

      const wrong = await browser.submit(enrol, '/account/one-time-codes', { code: totpCode(keyShownOn(enrol), now() + 10 * 60_000) });
      expect(wrong.status).toBe(400);
      expect(wrong.body).toContain('role="alert"');
      // The same key is offered again (it waits in the encrypted cookie), and nothing was stored.
      expect(keyShownOn(wrong)).toBe(keyShownOn(enrol));
      expect(await app.dataSource.query(`SELECT * FROM "totp_factors" WHERE "user_id" = '${await userId(user.username)}'`)).toEqual([]);
    });

    it('a first right code turns them on, shows ten recovery codes once, and stores the key sealed and the codes hashed', async () => {
      const { user, key, recoveryCodes, browser } = await enrolledPerson();
      expect(recoveryCodes).toHaveLength(10);
      expect(new Set(recoveryCodes).size).toBe(10);
      for (const code of recoveryCodes) expect(code).toMatch(/^[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}$/);

      const id = await userId(user.username);
      const [factor] = (await app.dataSource.query(`SELECT * FROM "totp_factors" WHERE "user_id" = '${id}'`)) as { sealed_secret: string }[];
      expect(factor.sealed_secret).toMatch(/^v1\./);
      expect(factor.sealed_secret).not.toContain(key);
      const stored = (await app.dataSource.query(`SELECT "code_hash", "used_at" FROM "recovery_codes" WHERE "user_id" = '${id}'`)) as { code_hash: string; used_at: unknown }[];
      expect(stored).toHaveLength(10);
      for (const row of stored) {
        expect(row.code_hash).toMatch(/^[0-9a-f]{64}$/);
        expect(recoveryCodes.map((c) => c.replace(/-/g, ''))).not.toContain(row.code_hash);
      }

      const home = await browser.get('/account');
      expect(home.body).toContain('One-time codes are on');
      expect(home.body).toContain('10 recovery codes are left.');
      expect(home.body).not.toContain(recoveryCodes[0]);
    });
  });

  describe('sign-in asks for the code after the password', () => {
    it('signs nobody in before the code; the code signs in, and the ID token says pwd, otp, mfa', async () => {
      const { user, key } = await enrolledPerson();
      nextStep();
      const browser = new Browser(app.baseUrl);
      const pkce = newPkce();
      const url = authorizeUrl(client, { scope: 'openid notes:read', state: 's1', nonce: 'n1', code_challenge: pkce.challenge, code_challenge_method: 'S256' });
      const login = await browser.get(url);
      expect(isLoginPage(login)).toBe(true);
      const afterPassword = await browser.submit(login, '/login', { username: user.username, password: user.password });
      expect(afterPassword.status).toBe(303);
      expect(afterPassword.location).toBe('/login/code');

      // Between the password and the code, nobody is signed in.
      expect(isLoginPage(await browser.get(url))).toBe(true);
      expect((await browser.get('/account')).body).not.toContain('You are signed in');
      const silent = await browser.get(authorizeUrl(client, { scope: 'openid notes:read', prompt: 'none', state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256' }));
      expect(redirectParams(silent).get('error')).toBe('login_required');

      const codePage = await browser.get('/login/code');
      expect(codePage.status).toBe(200);
      expect(codePage.body).toContain('to continue to <strong>Acme Notes</strong>');
      expect(codePage.body).toMatch(/<label for="code">/);
      expect(codePage.body).toMatch(/inputmode="numeric" autocomplete="one-time-code"/);

      const signedIn = await browser.submit(codePage, '/login/code', { code: totpCode(key, now()) });
      expect(signedIn.status).toBe(303);
      expect(signedIn.location).toBe(url);
      let page = await browser.get(signedIn.location!);
      if (isConsentPage(page)) page = await browser.submit(page, '/consent', { decision: 'allow' });
      const code = redirectParams(page).get('code')!;
      const tokens = await tokenRequest(app, client, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier });
      expect(tokens.status).toBe(200);
      const claims = decodeJwt(tokens.body.id_token as string);
      expect(claims.amr).toEqual(['pwd', 'otp', 'mfa']);
      expect(claims.acr).toBe('urn:latchkey:acr:mfa');
    });

    it('a wrong code is refused with 401 and signs nobody in', async () => {
      const { user, key } = await enrolledPerson();
      nextStep();
      const browser = new Browser(app.baseUrl);
      await signInWithPassword(browser, user);
      const codePage = await browser.get('/login/code');
      const right = totpCode(key, now());
      const wrong = right === '000000' ? '000001' : '000000';
      const refused = await browser.submit(codePage, '/login/code', { code: wrong });
      expect(refused.status).toBe(401);
      expect(refused.body).toContain('role="alert"');
      expect(refused.body).toContain('aria-invalid="true"');
      expect((await browser.get('/account')).body).not.toContain('You are signed in');
    });

    it('a person without a second factor still signs in with the password alone, with acr pwd', async () => {
      const user = await app.createUser();
      const browser = new Browser(app.baseUrl);
      const pkce = newPkce();
      const url = authorizeUrl(client, { scope: 'openid notes:read', state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256' });
      const login = await browser.get(url);
      const afterPassword = await browser.submit(login, '/login', { username: user.username, password: user.password });
      expect(afterPassword.location).toBe(url);
      let page = await browser.get(url);
      if (isConsentPage(page)) page = await browser.submit(page, '/consent', { decision: 'allow' });
      const tokens = await tokenRequest(app, client, { grant_type: 'authorization_code', code: redirectParams(page).get('code')!, redirect_uri: client.redirectUri, code_verifier: pkce.verifier });
      const claims = decodeJwt(tokens.body.id_token as string);
      expect(claims.amr).toEqual(['pwd']);
      expect(claims.acr).toBe('urn:latchkey:acr:pwd');
    });

    it('the wait between password and code is short: after it, the password is asked again', async () => {
      const { user, key } = await enrolledPerson();
      nextStep();
      const browser = new Browser(app.baseUrl);
      await signInWithPassword(browser, user);
      const codePage = await browser.get('/login/code');
      offsetMs += 301_000;
      const late = await browser.submit(codePage, '/login/code', { code: totpCode(key, now()) });
      expect(late.status).toBe(400);
      expect((await browser.get('/login/code')).location).toBe('/login');
    });
  });

  describe('recovery codes', () => {
    it('each signs in once, in place of a code', async () => {
      const { user, recoveryCodes } = await enrolledPerson();
      const first = new Browser(app.baseUrl);
      await signInWithPassword(first, user);
      const used = await first.submit(await first.get('/login/code'), '/login/code', { code: recoveryCodes[3].toUpperCase() });
      expect(used.status).toBe(303);
      expect((await first.get('/account')).body).toContain('9 recovery codes are left.');

      const second = new Browser(app.baseUrl);
      await signInWithPassword(second, user);
      const again = await second.submit(await second.get('/login/code'), '/login/code', { code: recoveryCodes[3] });
      expect(again.status).toBe(401);
    });

    it('making new ones ends the old ones', async () => {
      const { user, recoveryCodes, browser } = await enrolledPerson();
      const fresh = await browser.submit(await browser.get('/account'), '/account/recovery-codes');
      expect(fresh.status).toBe(200);
      const newCodes = recoveryCodesShownOn(fresh);
      expect(newCodes).toHaveLength(10);
      expect(newCodes).not.toContain(recoveryCodes[0]);

      const old = new Browser(app.baseUrl);
      await signInWithPassword(old, user);
      expect((await old.submit(await old.get('/login/code'), '/login/code', { code: recoveryCodes[0] })).status).toBe(401);
      expect((await old.submit(await old.get('/login/code'), '/login/code', { code: newCodes[0] })).status).toBe(303);
    });
  });

  describe('changing factors', () => {
    it('needs a recent sign-in', async () => {
      const { user, browser } = await enrolledPerson();
      const home = await browser.get('/account');
      offsetMs += 6 * 60_000;
      const refused = await browser.submit(home, '/account/one-time-codes/remove');
      expect(refused.status).toBe(403);
      expect(await app.dataSource.query(`SELECT "user_id" FROM "totp_factors" WHERE "user_id" = '${await userId(user.username)}'`)).toHaveLength(1);
    });

    it('needs a sign-in with the second factor: a recent password-only session from before the enrolment cannot remove it', async () => {
      const user = await app.createUser();
      const older = new Browser(app.baseUrl);
      await signInWithPassword(older, user);
      const enrolling = new Browser(app.baseUrl);
      await signInWithPassword(enrolling, user);
      const enrol = await enrolling.get('/account/one-time-codes');
      expect((await enrolling.submit(enrol, '/account/one-time-codes', { code: totpCode(keyShownOn(enrol), now()) })).status).toBe(200);
      const home = await older.get('/account');
      expect((await older.submit(home, '/account/one-time-codes/remove')).status).toBe(403);
      expect((await older.submit(home, '/account/recovery-codes')).status).toBe(403);
      expect(await app.dataSource.query(`SELECT "user_id" FROM "totp_factors" WHERE "user_id" = '${await userId(user.username)}'`)).toHaveLength(1);
    });

    it('turning one-time codes off removes them and the recovery codes; the password alone signs in again', async () => {
      const { user, browser } = await enrolledPerson();
      const removed = await browser.submit(await browser.get('/account'), '/account/one-time-codes/remove');
      expect(removed.status).toBe(303);
      const id = await userId(user.username);
      expect(await app.dataSource.query(`SELECT "user_id" FROM "totp_factors" WHERE "user_id" = '${id}'`)).toEqual([]);
      expect(await app.dataSource.query(`SELECT "code_hash" FROM "recovery_codes" WHERE "user_id" = '${id}'`)).toEqual([]);
      const again = new Browser(app.baseUrl);
      expect((await signInWithPassword(again, user)).location).toBe('/');
    });

    it('every sign-in, enrolment, use, failure and removal is in the audit trail', async () => {
      const { user, key, browser } = await enrolledPerson();
      nextStep();
      const other = new Browser(app.baseUrl);
      await signInWithPassword(other, user);
      await other.submit(await other.get('/login/code'), '/login/code', { code: totpCode(key, now() + 3_600_000) });
      await other.submit(await other.get('/login/code'), '/login/code', { code: totpCode(key, now()) });
      await browser.submit(await browser.get('/account'), '/account/one-time-codes/remove');
      const id = await userId(user.username);
      const actions = ((await app.dataSource.query(`SELECT "action" FROM "audit_events" WHERE "subject" = 'user:${id}' ORDER BY "id"`)) as { action: string }[]).map((r) => r.action);
      // The sign-in itself once the code is right (issue 48: the person's security events).
      expect(actions).toEqual(['user.signed_in', 'factor.totp.enrolled', 'factor.failed', 'factor.totp.used', 'user.signed_in', 'factor.removed']);
    });
  });
});
