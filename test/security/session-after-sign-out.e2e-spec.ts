/**
 * Threat: a copy of the session cookie, taken before the person signed out (a shared computer, a
 * stolen backup, malware), still signs them in afterwards, because the session lived only in the
 * cookie (OWASP ASVS 3.3.1; issue 15, item 4). The same for a password change after an account
 * takeover: the attacker's browser stayed signed in.
 * Defence: each sign-in has a row in the sessions table, named by the hash of a secret inside the
 * encrypted cookie and checked on every page request. Sign-out ends that row; a password change
 * and "sign out everywhere else" end the person's other rows; deleting the person deletes them.
 * The rows are in the shared database, so this holds on every instance.
 */
import { jest } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { IsNull } from 'typeorm';
import { AccountsService } from '../../src/accounts/accounts.service.js';
import { createApp } from '../../src/app.setup.js';
import { PurgeService } from '../../src/housekeeping/purge.service.js';
import { DEVICE_MEMORY_DAYS } from '../../src/sessions/device-history.js';
import { Session } from '../../src/sessions/session.entity.js';
import { UsersService } from '../../src/users/users.service.js';
import { Browser, isLoginPage, type Page } from '../helpers/browser.js';
import { TestApp, type TestUser } from '../helpers/test-app.js';

const SIGNED_IN = 'You are signed in';

describe('signing out ends the session on the server (OWASP ASVS 3.3.1)', () => {
  let app: TestApp;
  let second: { nest: NestFastifyApplication; baseUrl: string };

  beforeAll(async () => {
    app = await TestApp.start({ PURGE_GRACE_SECONDS: '60' });
    // A second instance on the same database, as behind a load balancer (it neither creates nor drops the database).
    const nest = await createApp({ level: 'error' });
    await nest.listen(0, '127.0.0.1');
    await nest.getHttpAdapter().getInstance().ready();
    second = { nest, baseUrl: `http://127.0.0.1:${(nest.getHttpServer().address() as { port: number }).port}` };
  });
  afterAll(async () => {
    await second?.nest.close();
    await app?.stop();
  });
  afterEach(() => jest.restoreAllMocks());

  async function signIn(user: TestUser, baseUrl = app.baseUrl): Promise<Browser> {
    const browser = new Browser(baseUrl);
    const done = await browser.submit(await browser.get('/login'), '/login', { username: user.username, password: user.password });
    expect(done.status).toBe(303);
    expect(await isSignedIn(browser)).toBe(true);
    return browser;
  }

  /** The account page (issue 48) shows who is signed in; without a live session it sends the browser to sign in. */
  async function isSignedIn(browser: Browser): Promise<boolean> {
    const home = await browser.get('/account');
    if (home.status === 303) {
      expect(home.location).toBe('/login?return_to=%2Faccount');
      return false;
    }
    expect(home.status).toBe(200);
    return home.body.includes(SIGNED_IN);
  }

  const signOut = async (browser: Browser): Promise<Page> => browser.submit(await browser.get('/account'), '/logout');

  const sessionsOf = (user: TestUser) =>
    app.dataSource.getRepository(Session).createQueryBuilder('s').innerJoin('users', 'u', 'u.id = s.user_id').where('u.username = :name', { name: user.username }).getMany();

  const liveSessionsOf = async (user: TestUser) => (await sessionsOf(user)).filter((s) => s.endedAt === null);

  it('the control: a copy of the cookie taken while signed in works, on either instance (the cases below differ only in the sign-out)', async () => {
    const user = await app.createUser();
    const victim = await signIn(user);
    expect(await isSignedIn(victim.copy())).toBe(true);
    expect(await isSignedIn(victim.copy(second.baseUrl))).toBe(true);
  });

  it('after sign-out, a copy taken before it signs nobody in, on this instance or another; the row is ended', async () => {
    const user = await app.createUser();
    const victim = await signIn(user);
    const stolen = victim.copy();
    expect((await signOut(victim)).status).toBe(303);

    expect(await isSignedIn(victim)).toBe(false);
    expect(await isSignedIn(stolen)).toBe(false);
    expect(await isSignedIn(stolen.copy(second.baseUrl))).toBe(false);
    const loginPage = await stolen.get((await stolen.get('/account')).location!);
    expect(isLoginPage(loginPage)).toBe(true);
    const rows = await sessionsOf(user);
    expect(rows).toHaveLength(1);
    expect(rows[0].endedAt).not.toBeNull();
  });

  it('signing out on the second instance ends the session on the first', async () => {
    const user = await app.createUser();
    const victim = await signIn(user, second.baseUrl);
    const stolen = victim.copy(app.baseUrl);
    expect(await isSignedIn(stolen)).toBe(true);
    await signOut(victim);
    expect(await isSignedIn(stolen)).toBe(false);
  });

  it('a sign-out form without the CSRF token ends nothing', async () => {
    const user = await app.createUser();
    const victim = await signIn(user);
    const forged = await victim.post('/logout', { csrf_token: 'forged' });
    expect([303, 403]).toContain(forged.status);
    expect(await isSignedIn(victim)).toBe(true);
    expect(await liveSessionsOf(user)).toHaveLength(1);
  });

  it('a password change (users:set-password) ends every session of that person, and no one else\'s', async () => {
    const user = await app.createUser();
    const bystander = await app.createUser();
    const laptop = await signIn(user);
    const phone = await signIn(user, second.baseUrl);
    const other = await signIn(bystander);

    await app.app.get(AccountsService).setPassword(user.username, 'a brand new passphrase');

    expect(await isSignedIn(laptop)).toBe(false);
    expect(await isSignedIn(phone)).toBe(false);
    expect(await liveSessionsOf(user)).toHaveLength(0);
    expect(await isSignedIn(other)).toBe(true);
    expect(await signIn({ username: user.username, password: 'a brand new passphrase' })).toBeInstanceOf(Browser);
  });

  it('deleting the person deletes their sessions; their cookie signs nobody in', async () => {
    const user = await app.createUser();
    const browser = await signIn(user);
    expect(await sessionsOf(user)).toHaveLength(1);
    const before = await app.dataSource.getRepository(Session).count();
    await app.app.get(UsersService).delete(user.username);
    expect(await app.dataSource.getRepository(Session).count()).toBe(before - 1);
    expect(await isSignedIn(browser)).toBe(false);
  });

  it('signing in again in the same browser ends the session it had', async () => {
    const user = await app.createUser();
    const browser = await signIn(user);
    const stolen = browser.copy();
    const again = await browser.submit(await new Browser(app.baseUrl).get('/login'), '/login', { username: user.username, password: user.password });
    // The form came from a fresh browser, so its CSRF token does not match this browser's session: refused.
    expect(again.status).toBe(403);
    await signOut(browser);
    const fresh = await browser.submit(await browser.get('/login'), '/login', { username: user.username, password: user.password });
    expect(fresh.status).toBe(303);
    expect(await isSignedIn(browser)).toBe(true);
    expect(await isSignedIn(stolen)).toBe(false);
    expect(await liveSessionsOf(user)).toHaveLength(1);
  });

  describe('"sign out everywhere else" on the account page', () => {
    it('lists the other browsers, ends them all on every instance, and keeps this one', async () => {
      const user = await app.createUser();
      const here = await signIn(user);
      const elsewhere = [await signIn(user), await signIn(user, second.baseUrl)];
      const home = await here.get('/account');
      expect(home.body).toContain('You are also signed in on 2 other browsers or devices.');

      const done = await here.submit(home, '/account/sessions/end-others');
      expect(done.status).toBe(303);
      expect(done.location).toBe('/account?done=others&ended=2#sessions');
      const after = await here.get(done.location!);
      expect(after.body).toContain('You were signed out on 2 other browsers.');
      expect(after.body).toContain('You are not signed in anywhere else.');

      expect(await isSignedIn(here)).toBe(true);
      for (const browser of elsewhere) expect(await isSignedIn(browser)).toBe(false);
      expect(await liveSessionsOf(user)).toHaveLength(1);
    });

    it('refuses a forged form (no or another session\'s CSRF token) with 403 and ends nothing', async () => {
      const user = await app.createUser();
      const victim = await signIn(user);
      const otherDevice = await signIn(user);
      const attacker = await signIn(await app.createUser());
      const attackersToken = hiddenCsrf(await attacker.get('/account'));
      for (const fields of [{}, { csrf_token: attackersToken }] as Record<string, string>[]) {
        const reply = await victim.post('/account/sessions/end-others', fields);
        expect(reply.status).toBe(403);
      }
      expect(await isSignedIn(otherDevice)).toBe(true);
      expect(await liveSessionsOf(user)).toHaveLength(2);
    });

    it('without a session it sends the browser to sign in and ends nothing', async () => {
      const before = await app.dataSource.getRepository(Session).countBy({ endedAt: IsNull() });
      const anonymous = new Browser(app.baseUrl);
      const csrf = hiddenCsrf(await anonymous.get('/login'), '/login');
      const reply = await anonymous.post('/account/sessions/end-others', { csrf_token: csrf });
      expect(reply).toMatchObject({ status: 303, location: '/login?return_to=%2Faccount' });
      expect(await app.dataSource.getRepository(Session).countBy({ endedAt: IsNull() })).toBe(before);
    });
  });

  it('the purge job keeps ended and expired sessions DEVICE_MEMORY_DAYS (a new device is told by them), then deletes them, and keeps live ones', async () => {
    const ended = await app.createUser();
    await signOut(await signIn(ended));
    const start = Date.now();
    const at = (ms: number) => jest.spyOn(app.clock, 'now').mockReturnValue(new Date(start + ms));
    // Past the grace period: the ended session stays, for the device it was on; it signs nobody in.
    at(61_000);
    await app.app.get(PurgeService).purge();
    expect(await sessionsOf(ended)).toHaveLength(1);
    // DEVICE_MEMORY_DAYS on and past the grace period: it goes; a session started then stays.
    at(DEVICE_MEMORY_DAYS * 24 * 3600 * 1000 + 61_000);
    const live = await app.createUser();
    const browser = await signIn(live);
    const result = await app.app.get(PurgeService).purge();
    expect(result.sessions).toBeGreaterThanOrEqual(1);
    expect(await sessionsOf(ended)).toHaveLength(0);
    expect(await liveSessionsOf(live)).toHaveLength(1);
    expect(await isSignedIn(browser)).toBe(true);
  });
});

function hiddenCsrf(page: Page, action = '/logout'): string {
  const match = new RegExp(`action="${action}"[\\s\\S]*?name="csrf_token" value="([^"]+)"`).exec(page.body);
  if (!match) throw new Error(`No CSRF token in a form posting to ${action}`);
  return match[1];
}
