/**
 * Issue 48, the admin console in a real Chromium (support/chromium.ts, driven by playwright-core):
 * an owner signs in with a password and a one-time code, finds a failed sign-in in the audit log,
 * registers a client from the keyboard alone and copies its secret (shown once), resets a person's
 * second factors and ends one of their sessions, then signs out; a help desk finds a phone's session
 * on the Sessions page by its device and ends it. Every console page is checked for
 * the accessibility basics and by axe-core (support/page-checks.ts), and photographed into
 * /tmp/console-<page>.png for a person to look at.
 */
import { jest } from '@jest/globals';
import { AuditService } from '../../src/audit/audit.service.js';
import { SecondFactors } from '../../src/factors/second-factors.service.js';
import { SessionsService } from '../../src/sessions/sessions.service.js';
import { consolePerson, followSignIn, type ConsolePerson } from '../helpers/admin-console.js';
import { Browser, hiddenFields } from '../helpers/browser.js';
import { ConsoleInChromium, follow, heading, screenshotsAt, SKIP_LINK, tabTo } from './support/console-browser.js';
import { expectAccessible } from './support/page-checks.js';

jest.setTimeout(180_000);

const SAFARI_ON_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

describe('the admin console in a real browser (issue 48; WCAG 2.1 A and AA by axe-core)', () => {
  const suite = new ConsoleInChromium();

  beforeAll(() => suite.start());
  afterAll(() => suite.stop());

  const shoot = screenshotsAt('/tmp/console-');

  /** A person with one-time codes, signed in on a browser of their own (a live session the owner will see). */
  async function personWithSession(): Promise<ConsolePerson> {
    const person = await consolePerson(suite.nest, []);
    suite.clock.advance(30_000);
    const phone = new Browser(suite.origin);
    await followSignIn(phone, await phone.get('/login'), person, suite.clock.now);
    return person;
  }

  it('an owner signs in, finds a failed sign-in, registers a client by keyboard and copies its secret once, resets factors, ends a session, signs out', async () => {
    const owner = await consolePerson(suite.nest, ['owner']);
    const person = await personWithSession();
    await personWithSession();
    // Someone tries the person's account with a wrong password.
    const guesser = new Browser(suite.origin);
    const login = await guesser.get('/login');
    await guesser.post('/login', { ...hiddenFields(login.body, '/login'), username: person.username, password: 'not the password' });
    // Recorded after the answer (FailedSignIns.note): wait for the row.
    const recorded = () => suite.nest.get(AuditService).list(1, { event: { exact: 'user.sign_in_failed' }, person: person.userId });
    for (let tries = 0; tries < 100 && (await recorded()).length === 0; tries++) await new Promise((resolve) => setTimeout(resolve, 20));

    const { page, watcher } = await suite.openWindow();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: suite.origin });

    // Sign in: the password, then the one-time code, and straight back to the console: it is the server's own, so no consent page (issue 48).
    await suite.signIn(page, owner, '/admin', { atSignInForm: async () => expect(await heading(page)).toBe('Sign in') });
    expect(await heading(page)).toBe('Dashboard');
    await expect(page.locator('main').textContent()).resolves.toContain('user.sign_in_failed');
    await shoot(page, 'dashboard');
    await expectAccessible(page, watcher, SKIP_LINK);

    // The audit log, filtered to failed sign-ins: the attempt on the person's account.
    await follow(page, 'link', 'Audit log', '/admin/audit');
    await page.getByLabel('Event').fill('user.sign_in_failed');
    await follow(page, 'button', 'Filter', '/admin/audit');
    const row = page.locator('tbody tr').filter({ hasText: `user:${person.userId}` });
    await expect(row.count()).resolves.toBe(1);
    await expect(row.textContent()).resolves.toContain('wrong_password');
    await shoot(page, 'audit');
    await expectAccessible(page, watcher, SKIP_LINK);

    // Register a client from the keyboard alone; the secret is shown once, and copied.
    await page.goto(`${suite.origin}/admin/clients`);
    await shoot(page, 'clients');
    await expectAccessible(page, watcher, SKIP_LINK);
    await page.mouse.click(1, 1);
    await tabTo(page, 'Register a client');
    await Promise.all([page.waitForURL((url) => url.pathname === '/admin/clients/new'), page.keyboard.press('Enter')]);
    await tabTo(page, 'client_name');
    await page.keyboard.type('Reports robot');
    await tabTo(page, 'grant_types=authorization_code');
    await page.keyboard.press('Space');
    await tabTo(page, 'grant_types=client_credentials');
    await page.keyboard.press('Space');
    await tabTo(page, 'scope');
    await page.keyboard.type('notes:read');
    await shoot(page, 'client-new');
    await Promise.all([page.waitForURL((url) => /^\/admin\/clients\/[^/]+$/.test(url.pathname) && url.pathname !== '/admin/clients/new'), page.keyboard.press('Enter')]);
    expect(await heading(page)).toBe('Reports robot');
    const secret = await page.getByRole('textbox', { name: 'Client secret' }).inputValue();
    expect(secret).toMatch(/^lk_cs_/);
    await tabTo(page, 'Copy');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Copied.' }).waitFor();
    expect(await page.evaluate(() => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText())).toBe(secret);
    await shoot(page, 'client-secret');
    await expectAccessible(page, watcher, SKIP_LINK);
    await page.reload();
    await expect(page.getByRole('textbox', { name: 'Client secret' }).count()).resolves.toBe(0);
    expect(await page.content()).not.toContain(secret);

    // Reset the person's second factors, after the confirmation page.
    await follow(page, 'link', 'People', '/admin/people');
    await page.getByLabel('Search').fill(person.username);
    await follow(page, 'button', 'Search', '/admin/people');
    await shoot(page, 'people');
    await expectAccessible(page, watcher, SKIP_LINK);
    await follow(page, 'link', person.username, `/admin/people/${person.userId}`);
    await shoot(page, 'person');
    await expectAccessible(page, watcher, SKIP_LINK);
    await follow(page, 'link', 'Reset second factors', /\/confirm\/reset-factors$/);
    await shoot(page, 'confirm');
    await expectAccessible(page, watcher, SKIP_LINK);
    await follow(page, 'button', 'Reset second factors', `/admin/people/${person.userId}`);
    await expect(page.getByRole('status').textContent()).resolves.toContain(`Second factors of ${person.username} removed`);
    expect(await suite.nest.get(SecondFactors).hasSecondFactor(person.userId)).toBe(false);

    // End the session the person's browser holds.
    expect(await suite.nest.get(SessionsService).livePageOf(person.userId, 10, null)).toHaveLength(1);
    await follow(page, 'link', /^End the session started/, /\/sessions\/[^/]+\/end$/);
    await follow(page, 'button', 'End the session', `/admin/people/${person.userId}`);
    await expect(page.getByRole('status').textContent()).resolves.toBe('The session ended.');
    expect(await suite.nest.get(SessionsService).livePageOf(person.userId, 10, null)).toHaveLength(0);
    await shoot(page, 'person-after');
    await expectAccessible(page, watcher, SKIP_LINK);

    await follow(page, 'link', 'Signing keys', '/admin/keys');
    await shoot(page, 'keys');
    await expectAccessible(page, watcher, SKIP_LINK);

    await follow(page, 'button', 'Sign out', '/admin/signed-out');
    expect(await heading(page)).toBe('You are signed out');
    await shoot(page, 'signed-out');
    await expectAccessible(page, watcher, SKIP_LINK);
  });

  it('a help desk finds a phone on the Sessions page by its device and ends its session after the confirmation', async () => {
    const helpdesk = await consolePerson(suite.nest, ['helpdesk']);
    const holder = await consolePerson(suite.nest, [], false);
    suite.clock.advance(30_000);
    const phone = new Browser(suite.origin, { 'user-agent': SAFARI_ON_IPHONE });
    await followSignIn(phone, await phone.get('/login'), holder, suite.clock.now);
    expect(await suite.nest.get(SessionsService).livePageOf(holder.userId, 10, null)).toHaveLength(1);

    const { page, watcher } = await suite.openWindow();
    await suite.signIn(page, helpdesk);

    await follow(page, 'link', 'Sessions', '/admin/sessions');
    expect(await heading(page)).toBe('Sessions');
    await page.getByLabel('Device').fill('iphone');
    await follow(page, 'button', 'Filter', '/admin/sessions');
    const row = page.locator('tbody tr');
    await expect(row.count()).resolves.toBe(1);
    await expect(row.textContent()).resolves.toContain('Safari on iPhone');
    await shoot(page, 'sessions');
    await expectAccessible(page, watcher, SKIP_LINK);

    await follow(page, 'link', new RegExp(`^End the session of ${holder.username} started`), /^\/admin\/sessions\/[^/]+\/end$/);
    expect(await heading(page)).toBe('End a session');
    await expect(page.locator('main').textContent()).resolves.toContain(`End the session of ${holder.username} on Safari on iPhone, from 127.0.0.1?`);
    await shoot(page, 'session-end');
    await expectAccessible(page, watcher, SKIP_LINK);
    await follow(page, 'button', 'End the session', '/admin/sessions');
    expect(new URL(page.url()).searchParams.get('device')).toBe('iphone');
    await expect(page.getByRole('status').textContent()).resolves.toBe(`The session of ${holder.username} on Safari on iPhone, from 127.0.0.1 ended.`);
    await expect(page.locator('main').textContent()).resolves.toContain('No live session matches.');
    expect(await suite.nest.get(SessionsService).livePageOf(holder.userId, 10, null)).toHaveLength(0);
    await expectAccessible(page, watcher, SKIP_LINK);
  });
});
