/**
 * Issue 46, email: every flow against a real SMTP server (smtp-server, in this process) and the
 * real app on a real port: the message arrives, its link works once, an expired or reused link is
 * refused, an unknown address gets the same answer as a known one (timing included), and the
 * forms refuse other sites and missing CSRF tokens.
 */
import { jest } from '@jest/globals';
import { performance } from 'node:perf_hooks';
import { AccountEmails } from '../../src/email-links/account-emails.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { Browser, type Page } from '../helpers/browser.js';
import { TestApp } from '../helpers/test-app.js';
import { median, quantile } from '../security/support/statistics.js';
import { linkIn, SmtpSink } from '../helpers/smtp-sink.js';

const ENV = { SMTP_TLS: 'none', MAIL_FROM: 'Latchkey Test <no-reply@latchkey.test>', MAIL_SERVICE_NAME: 'Latchkey Test', SELF_REGISTRATION: 'on', SELF_REGISTRATION_DOMAINS: 'example.org' };
/** The default issuer (app.config.ts): the links carry it, whatever port the test app listens on. */
const ISSUER = 'http://localhost:3000';
const NEW_PASSWORD = 'a brand new passphrase';

describe('email flows (issue 46)', () => {
  let smtp: SmtpSink;
  let app: TestApp;
  let users: UsersService;

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    app = await TestApp.start({ ...ENV, SMTP_URL: smtp.url });
    users = app.app.get(UsersService);
  });

  afterAll(async () => {
    await app.stop();
    await smtp.stop();
    for (const name of [...Object.keys(ENV), 'SMTP_URL']) delete process.env[name];
  });

  async function person(email: string, password = 'correct horse battery staple'): Promise<{ username: string; password: string }> {
    const { username } = await app.createUser(undefined, password);
    await users.updateProfile(username, { email });
    return { username, password };
  }

  async function signIn(browser: Browser, username: string, password: string): Promise<Page> {
    const login = await browser.get('/login');
    return browser.submit(login, '/login', { username, password });
  }

  async function signedIn(browser: Browser): Promise<boolean> {
    return (await browser.get('/account')).body.includes('You are signed in');
  }

  async function forgot(browser: Browser, email: string): Promise<Page> {
    const page = await browser.get('/password/forgot');
    expect(page.status).toBe(200);
    return browser.submit(page, '/password/forgot', { email });
  }

  it('offers "Forgot your password?" and "Create an account" on the sign-in page', async () => {
    const login = await new Browser(app.baseUrl).get('/login');
    expect(login.body).toContain('href="/password/forgot"');
    expect(login.body).toContain('href="/signup"');
  });

  describe('forgotten password', () => {
    it('sends a link that works once, ends every session, tells the person, and still needs the new password to sign in', async () => {
      const alice = await person('alice@example.org');
      const elsewhere = new Browser(app.baseUrl);
      await signIn(elsewhere, alice.username, alice.password);
      expect(await signedIn(elsewhere)).toBe(true);

      const browser = new Browser(app.baseUrl);
      const answer = await forgot(browser, 'Alice@Example.org');
      expect(answer.status).toBe(200);
      expect(answer.body).toContain('Check your inbox');
      const mail = await smtp.waitFor('alice@example.org');
      expect(mail.subject).toBe('Reset your Latchkey Test password');
      expect(mail.from).toContain('no-reply@latchkey.test');
      const link = linkIn(mail, ISSUER, '/password/reset?token=');
      expect(mail.html).toContain(`href="${ISSUER}${link}"`);

      const form = await browser.get(link);
      expect(form.status).toBe(200);
      expect(form.body).toContain('Recovery codes are for a lost second factor, not a lost password.');
      // A mistyped confirmation does not burn the link.
      const mistyped = await browser.submit(form, '/password/reset', { password: NEW_PASSWORD, password_confirm: 'something else' });
      expect(mistyped.status).toBe(400);
      const done = await browser.submit(form, '/password/reset', { password: NEW_PASSWORD, password_confirm: NEW_PASSWORD });
      expect(done.status).toBe(200);
      expect(done.body).toContain('Your password was changed');
      // Not signed in by the reset: a second factor would still be asked at sign-in.
      expect(await signedIn(browser)).toBe(false);
      expect(await signedIn(elsewhere)).toBe(false);
      const notice = await smtp.waitFor('alice@example.org', 2);
      expect(notice.subject).toBe('Your Latchkey Test password was changed');
      expect(notice.text).not.toContain('token=');

      const again = await browser.submit(form, '/password/reset', { password: 'yet another passphrase', password_confirm: 'yet another passphrase' });
      expect(again.status).toBe(400);
      expect(again.body).toContain('This link no longer works');
      expect(await users.authenticate(alice.username, 'yet another passphrase')).toBeNull();
      expect(await users.authenticate(alice.username, alice.password)).toBeNull();
      expect(await users.authenticate(alice.username, NEW_PASSWORD)).not.toBeNull();
      await signIn(browser, alice.username, NEW_PASSWORD);
      expect(await signedIn(browser)).toBe(true);
    });

    it('answers an unknown address exactly as a known one, and sends nothing', async () => {
      await person('known@example.org');
      const known = await forgot(new Browser(app.baseUrl), 'known@example.org');
      const unknown = await forgot(new Browser(app.baseUrl), 'nobody@example.org');
      expect(unknown.status).toBe(known.status);
      expect(unknown.body.replace('nobody@example.org', 'X')).toBe(known.body.replace('known@example.org', 'X'));
      await smtp.waitFor('known@example.org');
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(smtp.to('nobody@example.org')).toHaveLength(0);
    });

    it('refuses an expired link (15 minutes by default)', async () => {
      await person('late@example.org');
      const browser = new Browser(app.baseUrl);
      await forgot(browser, 'late@example.org');
      const link = linkIn(await smtp.waitFor('late@example.org'), ISSUER, '/password/reset');
      const form = await browser.get(link);
      expect(form.status).toBe(200);
      jest.spyOn(app.clock, 'now').mockReturnValue(new Date(Date.now() + 15 * 60 * 1000 + 1000));
      try {
        expect((await browser.get(link)).status).toBe(400);
        const refused = await browser.submit(form, '/password/reset', { password: NEW_PASSWORD, password_confirm: NEW_PASSWORD });
        expect(refused.status).toBe(400);
        expect(refused.body).toContain('This link no longer works');
      } finally {
        jest.restoreAllMocks();
      }
    });

    it('throttles per address with the same answer: the fourth request in the window sends nothing', async () => {
      await person('busy@example.org');
      const answers: Page[] = [];
      for (let i = 0; i < 4; i++) answers.push(await forgot(new Browser(app.baseUrl), 'busy@example.org'));
      expect(new Set(answers.map((page) => `${page.status} ${page.body}`)).size).toBe(1);
      await smtp.waitFor('busy@example.org', 3);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(smtp.to('busy@example.org')).toHaveLength(3);
    });

    it('refuses a form without the CSRF token or from another site, and sends nothing', async () => {
      await person('csrf@example.org');
      const browser = new Browser(app.baseUrl);
      const page = await browser.get('/password/forgot');
      expect((await browser.post('/password/forgot', { email: 'csrf@example.org' })).status).toBe(403);
      expect((await browser.post('/password/forgot', { email: 'csrf@example.org', csrf_token: 'forged' })).status).toBe(403);
      const crossSite = await browser.post('/password/forgot', { email: 'csrf@example.org', csrf_token: /name="csrf_token" value="([^"]+)"/.exec(page.body)![1] }, { 'sec-fetch-site': 'cross-site' });
      expect(crossSite.status).toBe(403);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(smtp.to('csrf@example.org')).toHaveLength(0);
    });

    it('takes as long for an unknown address as for a known one', async () => {
      const ROUNDS = 20;
      const knownAddresses: string[] = [];
      for (let i = 0; i < ROUNDS + 2; i++) knownAddresses.push((await person(`timing${i}@example.org`)) && `timing${i}@example.org`);
      const time = async (email: string): Promise<number> => {
        const browser = new Browser(app.baseUrl);
        const page = await browser.get('/password/forgot');
        const start = performance.now();
        const answer = await browser.submit(page, '/password/forgot', { email });
        const elapsed = performance.now() - start;
        expect(answer.status).toBe(200);
        return elapsed;
      };
      // Warm-up of both paths, then interleaved, each address once (the throttle counts per address).
      await time(knownAddresses.pop()!);
      await time('warmup-nobody@example.org');
      const known: number[] = [];
      const unknown: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        known.push(await time(knownAddresses[i]));
        unknown.push(await time(`nobody${i}@example.org`));
      }
      const spread = Math.max(quantile(known, 0.75) - quantile(known, 0.25), quantile(unknown, 0.75) - quantile(unknown, 0.25));
      const difference = Math.abs(median(known) - median(unknown));
      console.log(JSON.stringify({ forgotPasswordTiming: { knownMedianMs: median(known), unknownMedianMs: median(unknown), differenceMs: difference, spreadMs: spread } }));
      // Generous: the difference of the medians within the spread of either sample, or 2 ms (a send held in the request would add a whole SMTP round trip).
      expect(difference).toBeLessThan(Math.max(2 * spread, 2));
    });
  });

  describe('invitation', () => {
    it('sends a link to choose the first password, once; the address is then verified', async () => {
      const delivery = await app.app.get(AccountEmails, { strict: false }).invite('invited', 'invited@example.org', 'cli');
      expect(delivery).toMatchObject({ username: 'invited', email: 'invited@example.org', sent: true });
      expect(delivery.link).toBeUndefined();
      const mail = await smtp.waitFor('invited@example.org');
      expect(mail.subject).toBe('You are invited to Latchkey Test');
      const link = linkIn(mail, ISSUER, '/invitation?token=');
      expect(await users.authenticate('invited', NEW_PASSWORD)).toBeNull();
      const browser = new Browser(app.baseUrl);
      const form = await browser.get(link);
      const done = await browser.submit(form, '/invitation', { password: NEW_PASSWORD, password_confirm: NEW_PASSWORD });
      expect(done.status).toBe(200);
      expect(await users.authenticate('invited', NEW_PASSWORD)).not.toBeNull();
      expect((await users.findByUsername('invited'))?.emailVerified).toBe(true);
      expect((await browser.get(link)).status).toBe(400);
      expect((await browser.submit(form, '/invitation', { password: 'another passphrase', password_confirm: 'another passphrase' })).status).toBe(400);
      expect(await users.authenticate('invited', 'another passphrase')).toBeNull();
    });
  });

  describe('address change from the account page', () => {
    it('confirms the new address first, tells the old one, and verifies it on confirmation', async () => {
      const bob = await person('bob@example.org');
      const browser = new Browser(app.baseUrl);
      await signIn(browser, bob.username, bob.password);
      const page = await browser.get('/account/email');
      expect(page.status).toBe(200);
      const sent = await browser.submit(page, '/account/email', { email: 'bob@example.net' });
      expect(sent.status).toBe(200);
      const confirm = await smtp.waitFor('bob@example.net');
      const notice = await smtp.waitFor('bob@example.org');
      expect(notice.text).toContain('bob@example.net');
      expect(notice.text).not.toContain('token=');
      expect((await users.findByUsername(bob.username))?.email).toBe('bob@example.org');
      const link = linkIn(confirm, ISSUER, '/email/confirm-change?token=');
      const other = new Browser(app.baseUrl);
      const form = await other.get(link);
      expect((await other.submit(form, '/email/confirm-change')).status).toBe(200);
      expect(await users.findByUsername(bob.username)).toMatchObject({ email: 'bob@example.net', emailVerified: true });
      expect((await other.submit(form, '/email/confirm-change')).status).toBe(400);
    });

    it('refuses a change without a signed-in person, and changes nothing', async () => {
      const browser = new Browser(app.baseUrl);
      const page = await browser.get('/password/forgot');
      const token = /name="csrf_token" value="([^"]+)"/.exec(page.body)![1];
      const refused = await browser.post('/account/email', { csrf_token: token, email: 'attacker@example.org' });
      expect(refused.status).toBe(303);
      expect(refused.location).toContain('/login');
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(smtp.to('attacker@example.org')).toHaveLength(0);
    });

    it('verifies an address only while it is still the person\'s', async () => {
      const carol = await person('carol@example.org');
      await app.app.get(AccountEmails, { strict: false }).sendVerification(carol.username, 'cli');
      const link = linkIn(await smtp.waitFor('carol@example.org'), ISSUER, '/email/verify?token=');
      await users.updateProfile(carol.username, { email: 'carol@example.net' });
      const browser = new Browser(app.baseUrl);
      const stale = await browser.submit(await browser.get(link), '/email/verify');
      expect(stale.status).toBe(409);
      expect((await users.findByUsername(carol.username))?.emailVerified).toBe(false);
    });
  });

  describe('self-registration', () => {
    it('creates an account that cannot sign in until its address is confirmed, once', async () => {
      const browser = new Browser(app.baseUrl);
      const page = await browser.get('/signup');
      expect(page.status).toBe(200);
      const wrongDomain = await browser.submit(page, '/signup', { username: 'dora', email: 'dora@elsewhere.com', password: NEW_PASSWORD, password_confirm: NEW_PASSWORD });
      expect(wrongDomain.status).toBe(400);
      const answer = await browser.submit(page, '/signup', { username: 'dora', email: 'dora@example.org', password: NEW_PASSWORD, password_confirm: NEW_PASSWORD });
      expect(answer.status).toBe(200);
      const link = linkIn(await smtp.waitFor('dora@example.org'), ISSUER, '/signup/confirm?token=');
      expect(await users.authenticate('dora', NEW_PASSWORD)).toBeNull();
      const form = await browser.get(link);
      expect((await browser.submit(form, '/signup/confirm')).status).toBe(200);
      expect(await users.authenticate('dora', NEW_PASSWORD)).not.toBeNull();
      expect((await users.findByUsername('dora'))?.emailVerified).toBe(true);
      expect((await browser.submit(form, '/signup/confirm')).status).toBe(400);
    });

    it('answers the same for an address that has an account, and tells that address instead', async () => {
      await person('erin@example.org');
      const browser = new Browser(app.baseUrl);
      const answer = await browser.submit(await browser.get('/signup'), '/signup', { username: 'erin2', email: 'erin@example.org', password: NEW_PASSWORD, password_confirm: NEW_PASSWORD });
      expect(answer.status).toBe(200);
      expect(answer.body).toContain('Check your inbox');
      const mail = await smtp.waitFor('erin@example.org');
      expect(mail.subject).toContain('Someone tried to create');
      expect(await users.findByUsername('erin2')).toBeNull();
    });
  });
});
