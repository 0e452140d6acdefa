/**
 * Issue 46, the email pages in a real browser: headless Chromium (support/chromium.ts, driven by
 * playwright-core) types and clicks through the forgotten password, an invitation, an address
 * verification, an address change from the account page and a self-registration, following the
 * links of the messages a real SMTP server received (test/helpers/smtp-sink.ts). Every page is
 * checked for the accessibility basics and by axe-core (support/page-checks.ts) and photographed
 * into /tmp/shots (SCREENSHOTS_DIR) for a person to look at.
 */
import { jest } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Browser as Chromium, BrowserContext, Page as PlaywrightPage } from 'playwright-core';
import { AccountEmails } from '../../src/email-links/account-emails.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { Browser } from '../helpers/browser.js';
import { enrolFrom, signInWithPassword } from '../helpers/second-factor.js';
import { linkIn, SmtpSink } from '../helpers/smtp-sink.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { launchChromium } from './support/chromium.js';
import { expectAccessible, focused, openWindowAt, screenshot } from './support/page-checks.js';

jest.setTimeout(120_000);

const ENV = { SMTP_TLS: 'none', MAIL_FROM: 'Latchkey Test <no-reply@latchkey.test>', MAIL_SERVICE_NAME: 'Latchkey Test', SELF_REGISTRATION: 'on', SELF_REGISTRATION_DOMAINS: 'example.org', LOGIN_THROTTLE_ENABLED: 'false' };
const PASSWORD = 'correct horse battery staple';
const NEW_PASSWORD = 'a brand new passphrase';

describe('the email pages in a real browser (issue 46; WCAG 2.1 A and AA by axe-core)', () => {
  let smtp: SmtpSink;
  let nest: NestFastifyApplication;
  let issuer: URL;
  let users: UsersService;
  let chromium: Chromium;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    // Started together, each kept as soon as it is up: if one fails (no browser), afterAll still stops the others.
    const started = await Promise.allSettled([
      SmtpSink.start().then(async (sink) => {
        smtp = sink;
        ({ nest, issuer } = await startAtIssuer({ ...ENV, SMTP_URL: sink.url }));
        users = nest.get(UsersService);
      }),
      launchChromium().then((value) => (chromium = value.browser)),
    ]);
    const failure = started.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
  });

  afterAll(async () => {
    await Promise.allSettled(contexts.map((context) => context.close()));
    await chromium?.close();
    await nest?.close();
    await smtp?.stop();
    await dropTestDatabase();
    for (const name of [...Object.keys(ENV), 'SMTP_URL']) delete process.env[name];
  });

  const openWindow = () => openWindowAt(chromium, contexts, issuer.origin);

  async function person(username: string, email: string): Promise<void> {
    await users.create(username, PASSWORD);
    await users.updateProfile(username, { email });
  }

  /** The link to `path` in the `count`-th message to `address`, as the person's mail program shows it. */
  async function linkTo(address: string, path: string, count = 1): Promise<string> {
    return issuer.origin + linkIn(await smtp.waitFor(address, count), issuer.origin, path);
  }

  const heading = (page: PlaywrightPage): Promise<string | null> => page.getByRole('heading', { level: 1 }).textContent();

  /** Clicks the link or button named `name` and waits for the page it leads to. */
  async function follow(page: PlaywrightPage, role: 'link' | 'button', name: string, path: string): Promise<number | undefined> {
    const [response] = await Promise.all([page.waitForNavigation({ url: (url) => url.pathname === path }), page.getByRole(role, { name, exact: true }).click()]);
    return response?.status();
  }

  async function signIn(page: PlaywrightPage, username: string, password: string): Promise<void> {
    await page.locator('input#username').fill(username);
    await page.locator('input#password').fill(password);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
  }

  it('forgotten password: "Forgot your password?", the same answer for any address, the emailed link, a new password set from the keyboard, the second factor still asked, the link refused the second time', async () => {
    await person('alice', 'alice@example.org');
    // Alice has one-time codes: a new password must not be enough to sign in.
    const phone = new Browser(issuer.origin);
    await signInWithPassword(phone, { username: 'alice', password: PASSWORD });
    const { recoveryCodes } = await enrolFrom(phone, await phone.get('/account/one-time-codes'), Date.now());

    const { page, watcher } = await openWindow();
    expect((await page.goto(new URL('/login', issuer).href))?.status()).toBe(200);
    expect(await heading(page)).toBe('Sign in');
    await screenshot(page, 'login');
    await expectAccessible(page, watcher, 'input#username');

    expect(await follow(page, 'link', 'Forgot your password?', '/password/forgot')).toBe(200);
    expect(await heading(page)).toBe('Forgot your password?');
    await screenshot(page, 'forgot');
    await expectAccessible(page, watcher, 'input#email');

    // An address that is not an address: the form again, saying why, the field marked.
    await page.locator('input#email').fill('alice');
    expect(await follow(page, 'button', 'Send me a link', '/password/forgot')).toBe(400);
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Enter an email address');
    await expect(page.locator('input#email').getAttribute('aria-invalid')).resolves.toBe('true');
    await screenshot(page, 'forgot-invalid');
    await expectAccessible(page, watcher, 'input#email');

    await page.locator('input#email').fill('Alice@Example.org');
    expect(await follow(page, 'button', 'Send me a link', '/password/forgot')).toBe(200);
    expect(await heading(page)).toBe('Check your inbox');
    const answer = await page.getByRole('status').textContent();
    expect(answer).toContain('If an account uses Alice@Example.org, we sent it a link');
    await screenshot(page, 'forgot-sent');
    await expectAccessible(page, watcher, 'a "Back to sign in"');

    // An address nobody has: the very same page.
    const stranger = await openWindow();
    await stranger.page.goto(new URL('/password/forgot', issuer).href);
    await stranger.page.locator('input#email').fill('nobody@example.org');
    expect(await follow(stranger.page, 'button', 'Send me a link', '/password/forgot')).toBe(200);
    expect(await heading(stranger.page)).toBe('Check your inbox');
    expect((await stranger.page.locator('main').innerText()).replace('nobody@example.org', 'X')).toBe((await page.locator('main').innerText()).replace('Alice@Example.org', 'X'));

    const mail = await smtp.waitFor('alice@example.org');
    expect(mail.subject).toBe('Reset your Latchkey Test password');
    const link = await linkTo('alice@example.org', '/password/reset?token=');
    expect((await page.goto(link))?.status()).toBe(200);
    expect(await heading(page)).toBe('Choose a new password');
    await expect(page.locator('main').textContent()).resolves.toContain('If you use a second factor (one-time codes or a passkey), you still need it to sign in');
    await screenshot(page, 'reset');
    await expectAccessible(page, watcher, 'input#password');

    // From the keyboard alone: the first field has the focus; a mistyped confirmation comes back with the focus on the first field again.
    await page.reload();
    expect(await focused(page)).toBe('password');
    await page.keyboard.type(NEW_PASSWORD);
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('password_confirm');
    await page.keyboard.type('a brand new passphrase!');
    const [mistyped] = await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
    expect(mistyped?.status()).toBe(400);
    await expect(page.getByRole('alert').textContent()).resolves.toBe('The two passwords are not the same.');
    expect(await focused(page)).toBe('password');
    await screenshot(page, 'reset-mismatch');
    await expectAccessible(page, watcher, 'input#password');
    // (The checks above tabbed through the page; Tab from the top reaches this field first, as they showed.)
    await page.locator('input#password').focus();
    await page.keyboard.type(NEW_PASSWORD);
    await page.keyboard.press('Tab');
    await page.keyboard.type(NEW_PASSWORD);
    const [done] = await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
    expect(done?.status()).toBe(200);
    expect(await heading(page)).toBe('Your password was changed');
    await expect(page.getByRole('status').textContent()).resolves.toBe('Your new password is set, and you were signed out everywhere.');
    await screenshot(page, 'reset-done');
    await expectAccessible(page, watcher, 'a "Sign in"');
    expect(await users.authenticate('alice', PASSWORD)).toBeNull();

    // Signing in with it: the second factor is still asked for (a recovery code here).
    await follow(page, 'link', 'Sign in', '/login');
    await signIn(page, 'alice', NEW_PASSWORD);
    expect(await heading(page)).toBe('Enter your code');
    await screenshot(page, 'reset-second-factor');
    await page.locator('input#code').fill(recoveryCodes[0]);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Continue' }).click()]);
    expect(await heading(page)).toBe('Your account');

    // The link a second time: a clear page, and a way to ask for a new one.
    expect((await page.goto(link))?.status()).toBe(400);
    expect(await heading(page)).toBe('This link no longer works');
    await expect(page.getByRole('alert').textContent()).resolves.toContain('already used');
    await screenshot(page, 'reset-used');
    await expectAccessible(page, watcher, 'a "Ask for a new link"');
    expect(await follow(page, 'link', 'Ask for a new link', '/password/forgot')).toBe(200);
  });

  it('invitation: the emailed link, a first password, then signing in', async () => {
    const delivery = await nest.get(AccountEmails, { strict: false }).invite('ivan', 'ivan@example.org', 'cli');
    expect(delivery).toMatchObject({ username: 'ivan', sent: true });
    expect((await smtp.waitFor('ivan@example.org')).subject).toBe('You are invited to Latchkey Test');
    const link = await linkTo('ivan@example.org', '/invitation?token=');

    const { page, watcher } = await openWindow();
    expect((await page.goto(link))?.status()).toBe(200);
    expect(await heading(page)).toMatch(/^Welcome/);
    await expect(page.locator('main').textContent()).resolves.toContain('ivan');
    await screenshot(page, 'invitation');
    await expectAccessible(page, watcher, 'input#password');

    await page.locator('input#password').fill(NEW_PASSWORD);
    await page.locator('input#password_confirm').fill(NEW_PASSWORD);
    expect(await follow(page, 'button', 'Set password', '/invitation')).toBe(200);
    expect(await heading(page)).toBe('Your password is set');
    await expect(page.getByRole('status').textContent()).resolves.toBe('You can now sign in as ivan.');
    await screenshot(page, 'invitation-done');
    await expectAccessible(page, watcher, 'a "Sign in"');
    expect((await users.findByUsername('ivan'))?.emailVerified).toBe(true);

    await follow(page, 'link', 'Sign in', '/login');
    await signIn(page, 'ivan', NEW_PASSWORD);
    expect(await heading(page)).toBe('Your account');
    await expect(page.locator('.lead').textContent()).resolves.toBe('You are signed in as ivan.');

    expect((await page.goto(link))?.status()).toBe(400);
    expect(await heading(page)).toBe('This link no longer works');
    // Not a dead end: the way on is the home page, here the signed-in account.
    await screenshot(page, 'invitation-used');
    await expectAccessible(page, watcher, 'a "Go to your account"');
    await follow(page, 'link', 'Go to your account', '/account');
    expect(await heading(page)).toBe('Your account');
  });

  it('verification: the emailed link, the page that confirms, the address verified', async () => {
    await person('vera', 'vera@example.org');
    await nest.get(AccountEmails, { strict: false }).sendVerification('vera', 'cli');
    const link = await linkTo('vera@example.org', '/email/verify?token=');

    const { page, watcher } = await openWindow();
    // Opening the link changes nothing (mail scanners open links): the button does.
    expect((await page.goto(link))?.status()).toBe(200);
    expect(await heading(page)).toBe('Confirm your email address');
    await expect(page.locator('main').textContent()).resolves.toContain('Confirm that vera@example.org is your address.');
    expect((await users.findByUsername('vera'))?.emailVerified).toBe(false);
    await screenshot(page, 'verify');
    await expectAccessible(page, watcher, 'button "Confirm"');

    expect(await follow(page, 'button', 'Confirm', '/email/verify')).toBe(200);
    expect(await heading(page)).toBe('Address confirmed');
    await expect(page.getByRole('status').textContent()).resolves.toBe('vera@example.org is confirmed as your address.');
    await screenshot(page, 'verify-done');
    await expectAccessible(page, watcher, 'a "Your account"');
    expect((await users.findByUsername('vera'))?.emailVerified).toBe(true);
  });

  it('address change: from the account page, the link sent to the new address, confirmed', async () => {
    await person('bob', 'bob@example.org');
    const { page, watcher } = await openWindow();
    await page.goto(new URL('/login', issuer).href);
    await signIn(page, 'bob', PASSWORD);
    expect(await heading(page)).toBe('Your account');

    expect(await follow(page, 'link', 'Your email address', '/account/email')).toBe(200);
    expect(await heading(page)).toBe('Your email address');
    await expect(page.locator('main').textContent()).resolves.toContain('Your address is bob@example.org (not confirmed yet).');
    await screenshot(page, 'account-email');
    await expectAccessible(page, watcher, 'input#email');

    await page.locator('input#email').fill('bob@example.net');
    expect(await follow(page, 'button', 'Change address', '/account/email')).toBe(200);
    expect(await heading(page)).toBe('Check your inbox');
    await expect(page.getByRole('status').textContent()).resolves.toContain('We sent a link to bob@example.net.');
    await screenshot(page, 'account-email-sent');
    await expectAccessible(page, watcher, 'a "Back to your account"');
    // The old address is told, without the link.
    expect((await smtp.waitFor('bob@example.org')).text).not.toContain('token=');
    expect((await users.findByUsername('bob'))?.email).toBe('bob@example.org');

    const link = await linkTo('bob@example.net', '/email/confirm-change?token=');
    expect((await page.goto(link))?.status()).toBe(200);
    expect(await heading(page)).toBe('Confirm your new email address');
    await screenshot(page, 'confirm-change');
    await expectAccessible(page, watcher, 'button "Confirm"');
    expect(await follow(page, 'button', 'Confirm', '/email/confirm-change')).toBe(200);
    expect(await heading(page)).toBe('Your address was changed');
    await expect(page.getByRole('status').textContent()).resolves.toBe('Your email address is now bob@example.net.');
    await screenshot(page, 'confirm-change-done');
    await expectAccessible(page, watcher, 'a "Your account"');
    expect(await users.findByUsername('bob')).toMatchObject({ email: 'bob@example.net', emailVerified: true });

    // Back on the account page, the new address, confirmed.
    await follow(page, 'link', 'Your account', '/account');
    await follow(page, 'link', 'Your email address', '/account/email');
    await expect(page.locator('main').textContent()).resolves.toContain('Your address is bob@example.net (confirmed).');
  });

  it('self-registration: "Create an account", a refused domain, the link, the account ready, signing in', async () => {
    const { page, watcher } = await openWindow();
    await page.goto(new URL('/login', issuer).href);
    expect(await follow(page, 'link', 'Create an account', '/signup')).toBe(200);
    expect(await heading(page)).toBe('Create an account');
    await screenshot(page, 'signup');
    await expectAccessible(page, watcher, 'input#username');

    const fill = async (email: string) => {
      await page.locator('input#username').fill('dora');
      await page.locator('input#email').fill(email);
      await page.locator('input#password').fill(NEW_PASSWORD);
      await page.locator('input#password_confirm').fill(NEW_PASSWORD);
    };
    await fill('dora@elsewhere.com');
    expect(await follow(page, 'button', 'Create account', '/signup')).toBe(400);
    await expect(page.getByRole('alert').textContent()).resolves.toBe('Accounts here are for addresses at example.org.');
    await expect(page.locator('input#username').inputValue()).resolves.toBe('dora');
    await screenshot(page, 'signup-refused');
    await expectAccessible(page, watcher, 'input#username');

    await fill('dora@example.org');
    expect(await follow(page, 'button', 'Create account', '/signup')).toBe(200);
    expect(await heading(page)).toBe('Check your inbox');
    await screenshot(page, 'signup-sent');
    await expectAccessible(page, watcher, 'a "Back to sign in"');
    expect(await users.authenticate('dora', NEW_PASSWORD)).toBeNull();

    const link = await linkTo('dora@example.org', '/signup/confirm?token=');
    expect((await page.goto(link))?.status()).toBe(200);
    expect(await heading(page)).toBe('Finish creating your account');
    await screenshot(page, 'signup-confirm');
    await expectAccessible(page, watcher, 'button "Confirm my address"');
    expect(await follow(page, 'button', 'Confirm my address', '/signup/confirm')).toBe(200);
    expect(await heading(page)).toBe('Your account is ready');
    await screenshot(page, 'signup-done');
    await expectAccessible(page, watcher, 'a "Sign in"');

    await follow(page, 'link', 'Sign in', '/login');
    await signIn(page, 'dora', NEW_PASSWORD);
    expect(await heading(page)).toBe('Your account');
    await expect(page.locator('.lead').textContent()).resolves.toBe('You are signed in as dora.');
  });
});
