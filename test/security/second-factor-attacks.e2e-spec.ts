/**
 * Threats to the second factor (issue 33), by someone who already has the person's password:
 * guessing the 6-digit code online, replaying a code seen (over a shoulder, from a phishing page)
 * within its 30 seconds, and changing another person's factors. Defences: wrong codes are counted
 * per (address, person) and per person and slowed down like passwords, refused unchecked while
 * waiting; a code is accepted once, by a conditional UPDATE in the database (so on any instance);
 * the account routes act only on the session's own person, behind CSRF and a recent sign-in.
 */
import { jest } from '@jest/globals';
import { Browser, hiddenFields, type Page } from '../helpers/browser.js';
import { createApp } from '../../src/app.setup.js';
import { Clock } from '../../src/common/clock.js';
import { TestApp, type TestUser } from '../helpers/test-app.js';
import { keyShownOn, recoveryCodesShownOn, totpCode } from '../helpers/totp.js';

const FREE_FAILURES = 3;

describe('second factor attacks', () => {
  let app: TestApp;
  let offsetMs = 0;
  const now = () => Date.now() + offsetMs;

  beforeAll(async () => {
    app = await TestApp.start({ LOGIN_FREE_FAILURES: String(FREE_FAILURES), LOGIN_MAX_DELAY_SECONDS: '60', TRUST_PROXY: '127.0.0.1' });
    jest.spyOn(app.clock, 'now').mockImplementation(() => new Date(now()));
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await app?.stop();
  });

  /** A browser past the password step of `user`, from `address`. */
  async function pastPassword(user: TestUser, address = '203.0.113.1'): Promise<{ browser: Browser; codePage: Page; address: string }> {
    const browser = new Browser(app.baseUrl);
    const login = await browser.get('/login');
    const afterPassword = await browser.post('/login', { ...hiddenFields(login.body, '/login'), username: user.username, password: user.password }, { 'x-forwarded-for': address });
    expect(afterPassword.location).toBe('/login/code');
    return { browser, codePage: await browser.get('/login/code'), address };
  }

  async function enrolled(): Promise<{ user: TestUser; key: string; recoveryCodes: string[]; browser: Browser; id: string }> {
    const user = await app.createUser();
    const browser = new Browser(app.baseUrl);
    const login = await browser.get('/login');
    await browser.post('/login', { ...hiddenFields(login.body, '/login'), username: user.username, password: user.password });
    const enrol = await browser.get('/account/one-time-codes');
    const key = keyShownOn(enrol);
    const done = await browser.submit(enrol, '/account/one-time-codes', { code: totpCode(key, now()) });
    offsetMs += 30_000;
    const [{ id }] = (await app.dataSource.query(`SELECT "id" FROM "users" WHERE "username" = '${user.username}'`)) as { id: string }[];
    return { user, key, recoveryCodes: recoveryCodesShownOn(done), browser, id };
  }

  function wrongCode(key: string): string {
    const valid = new Set([-30_000, 0, 30_000].map((d) => totpCode(key, now() + d)));
    for (let n = 0; ; n++) {
      const guess = String(n).padStart(6, '0');
      if (!valid.has(guess)) return guess;
    }
  }

  async function factorRows(id: string): Promise<unknown[]> {
    return app.dataSource.query(`SELECT "user_id", "sealed_secret", "last_used_step" FROM "totp_factors" WHERE "user_id" = '${id}'`);
  }

  describe('code brute force', () => {
    it('after the free failures, even the right code is refused unchecked until the wait is over (429, Retry-After)', async () => {
      const { user, key } = await enrolled();
      const { browser, codePage, address } = await pastPassword(user);
      const post = (code: string) => browser.post('/login/code', { ...hiddenFields(codePage.body, '/login/code'), code }, { 'x-forwarded-for': address });
      for (let i = 0; i < FREE_FAILURES; i++) expect((await post(wrongCode(key))).status).toBe(401);
      const throttled = await post(totpCode(key, now()));
      expect(throttled.status).toBe(429);
      expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
      offsetMs += 2_000;
      expect((await post(totpCode(key, now()))).status).toBe(303);
    });

    it('guesses spread over many addresses still slow down: the person has a counter of their own', async () => {
      const { user, key } = await enrolled();
      const statuses: number[] = [];
      for (let i = 0; i < 2 * FREE_FAILURES + 1; i++) {
        const { browser, codePage, address } = await pastPassword(user, `198.51.100.${i + 1}`);
        statuses.push((await browser.post('/login/code', { ...hiddenFields(codePage.body, '/login/code'), code: wrongCode(key) }, { 'x-forwarded-for': address })).status);
      }
      expect(statuses.slice(0, 2 * FREE_FAILURES)).toEqual(Array(2 * FREE_FAILURES).fill(401));
      expect(statuses[2 * FREE_FAILURES]).toBe(429);
      offsetMs += 120_000;
    });
  });

  describe('code replay', () => {
    it('a code accepted once is refused the second time, within its window', async () => {
      const { user, key } = await enrolled();
      const code = totpCode(key, now());
      const first = await pastPassword(user, '192.0.2.10');
      expect((await first.browser.submit(first.codePage, '/login/code', { code })).status).toBe(303);
      const second = await pastPassword(user, '192.0.2.11');
      expect((await second.browser.submit(second.codePage, '/login/code', { code })).status).toBe(401);
      expect((await second.browser.get('/account')).body).not.toContain('You are signed in');
    });

    it('a code accepted on one instance is refused on another: the replay guard is the shared database, not memory', async () => {
      const { user, key } = await enrolled();
      const other = await createApp({ level: 'error' });
      try {
        await other.listen(0, '127.0.0.1');
        jest.spyOn(other.get(Clock), 'now').mockImplementation(() => new Date(now()));
        const otherUrl = `http://127.0.0.1:${(other.getHttpServer().address() as { port: number }).port}`;
        const code = totpCode(key, now());
        const first = await pastPassword(user, '192.0.2.40');
        expect((await first.browser.submit(first.codePage, '/login/code', { code })).status).toBe(303);
        const elsewhere = new Browser(otherUrl);
        const login = await elsewhere.get('/login');
        expect((await elsewhere.post('/login', { ...hiddenFields(login.body, '/login'), username: user.username, password: user.password })).location).toBe('/login/code');
        expect((await elsewhere.submit(await elsewhere.get('/login/code'), '/login/code', { code })).status).toBe(401);
        // Not because the other instance cannot check codes: the next step's code signs in there.
        offsetMs += 30_000;
        expect((await elsewhere.submit(await elsewhere.get('/login/code'), '/login/code', { code: totpCode(key, now()) })).status).toBe(303);
      } finally {
        await other.close();
      }
    });

    it('of two requests racing with the same code, exactly one signs in (the database decides)', async () => {
      const { user, key } = await enrolled();
      const code = totpCode(key, now());
      const a = await pastPassword(user, '192.0.2.20');
      const b = await pastPassword(user, '192.0.2.21');
      const statuses = (await Promise.all([a.browser.submit(a.codePage, '/login/code', { code }), b.browser.submit(b.codePage, '/login/code', { code })])).map((p) => p.status).sort();
      expect(statuses).toEqual([303, 401]);
    });

    it('a recovery code used once is refused the second time, even racing', async () => {
      const { user, recoveryCodes } = await enrolled();
      const a = await pastPassword(user, '192.0.2.30');
      const b = await pastPassword(user, '192.0.2.31');
      const statuses = (await Promise.all([a.browser.submit(a.codePage, '/login/code', { code: recoveryCodes[0] }), b.browser.submit(b.codePage, '/login/code', { code: recoveryCodes[0] })])).map((p) => p.status).sort();
      expect(statuses).toEqual([303, 401]);
    });
  });

  describe('changing someone else’s factors', () => {
    it('another signed-in person, a signed-out browser or a cross-site form change nothing', async () => {
      const victim = await enrolled();
      const before = await factorRows(victim.id);
      expect(before).toHaveLength(1);

      // Another person, signed in, with their own valid CSRF token: the routes take no person, only the session's.
      const other = await app.createUser();
      const attacker = new Browser(app.baseUrl);
      const login = await attacker.get('/login');
      await attacker.post('/login', { ...hiddenFields(login.body, '/login'), username: other.username, password: other.password });
      const home = await attacker.get('/account');
      const csrf = hiddenFields(home.body, '/logout').csrf_token;
      for (const action of ['/account/one-time-codes/remove', '/account/recovery-codes']) {
        await attacker.post(action, { csrf_token: csrf, user: victim.user.username, user_id: victim.id });
      }
      // Enrolling "for" the victim with a code the attacker computes enrols the attacker, never the victim.
      expect(await factorRows(victim.id)).toEqual(before);

      // No session at all.
      const stranger = new Browser(app.baseUrl);
      expect((await stranger.post('/account/one-time-codes/remove', { user_id: victim.id })).status).toBe(200);
      // The victim's own browser, but a form from another site (no CSRF token).
      expect((await victim.browser.post('/account/one-time-codes/remove', {})).status).toBe(403);
      expect((await victim.browser.post('/account/recovery-codes', {})).status).toBe(403);
      expect(await factorRows(victim.id)).toEqual(before);
      const codes = (await app.dataSource.query(`SELECT "code_hash" FROM "recovery_codes" WHERE "user_id" = '${victim.id}' AND "used_at" IS NULL`)) as unknown[];
      expect(codes).toHaveLength(10);
    });
  });
});
