/**
 * Issue 48, part 3, in a real browser: headless Chromium (support/chromium.ts, driven by
 * playwright-core) signs in, opens /account, changes the name with the keyboard alone (Tab to the
 * field, type, Tab to the button, Enter), ends the session of another browser, and checks the
 * page's accessibility basics and axe-core's WCAG 2.1 A and AA rules (support/page-checks.ts), on
 * the page as it first shows and as it shows a refused form. Screenshots go to /tmp/shots
 * (SCREENSHOTS_DIR) for a person to look at.
 */
import { jest } from '@jest/globals';
import type { Browser as Chromium, BrowserContext, Page as PlaywrightPage } from 'playwright-core';
import { UsersService } from '../../src/users/users.service.js';
import { PasskeyTestApp } from '../helpers/passkeys.js';
import { launchChromium } from './support/chromium.js';
import { expectAccessible, focused, openWindowAt, screenshot } from './support/page-checks.js';

jest.setTimeout(120_000);

describe('the account page in a real browser (issue 48; WCAG 2.1 A and AA by axe-core)', () => {
  let app: PasskeyTestApp;
  let chromium: Chromium;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    // Started together, each kept as soon as it is up: if one fails (no browser), afterAll still stops the other.
    const started = await Promise.allSettled([PasskeyTestApp.start().then((value) => (app = value)), launchChromium().then((value) => (chromium = value.browser))]);
    const failure = started.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
  });
  afterAll(async () => {
    await Promise.allSettled(contexts.map((context) => context.close()));
    await chromium?.close();
    await app?.stop();
  });

  const openWindow = () => openWindowAt(chromium, contexts, app.origin);
  const heading = (page: PlaywrightPage): Promise<string | null> => page.getByRole('heading', { level: 1 }).textContent();

  async function signIn(page: PlaywrightPage, user: { username: string; password: string }): Promise<void> {
    await page.goto(`${app.origin}/account`);
    // Not signed in: the sign-in form, which comes back to the account page.
    expect(new URL(page.url()).pathname).toBe('/login');
    await page.getByLabel('Username').fill(user.username);
    await page.getByLabel('Password').fill(user.password);
    await Promise.all([page.waitForURL(`${app.origin}/account`), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
  }

  /** What has the focus: its id, else its text (a button). */
  const focusName = async (page: PlaywrightPage): Promise<string | null> => {
    const id = await focused(page);
    return id === 'button' ? (await page.locator(':focus').textContent())?.trim() ?? null : id;
  };

  /** Presses Tab until `target` (an id, or a button's text) has the focus, at most `max` times; fails with where the focus went otherwise. */
  async function tabTo(page: PlaywrightPage, target: string, max = 10): Promise<void> {
    const stops: (string | null)[] = [];
    for (let i = 0; i < max && (await focusName(page)) !== target; i++) {
      await page.keyboard.press('Tab');
      stops.push(await focusName(page));
    }
    expect(stops.at(-1)).toBe(target);
  }

  it('signs in, changes the name with the keyboard alone, ends another session; the page passes axe-core', async () => {
    const user = await app.createUser('grace.hopper', 'cobol 1959 compiler');
    const { page, watcher } = await openWindow();
    const other = await openWindow();
    await signIn(other.page, user);
    await signIn(page, user);
    expect(await heading(page)).toBe('Your account');
    await expect(page.getByRole('region', { name: 'Where you are signed in' }).getByRole('heading', { level: 3 }).allTextContents()).resolves.toEqual(['This device', 'Chrome on Linux']);
    await screenshot(page, 'account');
    await expectAccessible(page, watcher, 'button "Sign out"', 20);

    // The name, with the keyboard only: Tab from the top of the page to the field, type, Tab to the button, Enter.
    await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { blur?: () => void } | null } }).document.activeElement?.blur?.());
    await page.mouse.click(1, 1);
    await tabTo(page, 'profile-name');
    await page.keyboard.type('Grace Brewster Hopper');
    await tabTo(page, 'Save profile', 3);
    await Promise.all([page.waitForURL(`${app.origin}/account?done=profile#profile`), page.keyboard.press('Enter')]);
    await expect(page.getByRole('status').textContent()).resolves.toBe('Your profile was saved.');
    expect((await app.nest.get(UsersService).findByUsername(user.username))?.name).toBe('Grace Brewster Hopper');

    // A refused form: the error is announced, tied to its field, and the page still passes.
    await page.getByLabel('Email address').fill('not an address');
    await Promise.all([page.waitForURL(`${app.origin}/account/profile`), page.getByRole('button', { name: 'Save profile' }).click()]);
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Your profile was not saved');
    await expect(page.getByLabel('Email address').getAttribute('aria-invalid')).resolves.toBe('true');
    await screenshot(page, 'account-refused');
    await expectAccessible(page, watcher, 'button "Sign out"', 20);

    // The other browser's session, ended from here: that browser is sent to sign in.
    await page.goto(`${app.origin}/account`);
    await Promise.all([page.waitForURL(`${app.origin}/account?done=session#sessions`), page.getByRole('button', { name: /^End this session, signed in / }).click()]);
    await expect(page.getByRole('status').textContent()).resolves.toBe('That session was ended: the browser it was on is signed out.');
    await expect(page.getByText('You are not signed in anywhere else.').isVisible()).resolves.toBe(true);
    await other.page.goto(`${app.origin}/account`);
    expect(new URL(other.page.url()).pathname).toBe('/login');
    await screenshot(page, 'account-session-ended');
    expect(watcher.problems()).toEqual({ consoleErrors: [], pageErrors: [], failedRequests: [] });
  });
});
