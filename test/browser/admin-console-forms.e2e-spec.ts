/**
 * Issue 48, the admin console's people and client forms in a real Chromium (support/chromium.ts,
 * driven by playwright-core): an owner adds a person from the keyboard alone (a taken username
 * first: the message beside the field and in the summary), edits their profile, gives them a role,
 * links and unlinks an upstream identity, edits a client's registration (a refused redirect URI
 * first), and sees a refused redirect URI beside its field on the registration form. Every new
 * page, its error state included, is checked by axe-core and the accessibility basics
 * (support/page-checks.ts) and photographed into /tmp/console-shots-forms/.
 */
import { jest } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { mkdirSync } from 'node:fs';
import type { Browser as Chromium, BrowserContext, Page as PlaywrightPage } from 'playwright-core';
import { ClientsService } from '../../src/clients/clients.service.js';
import { Clock } from '../../src/common/clock.js';
import { IdentityProvidersService } from '../../src/identity-providers/identity-providers.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { consolePerson } from '../helpers/admin-console.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { totpCode } from '../helpers/totp.js';
import { launchChromium } from './support/chromium.js';
import { expectAccessible, openWindowAt } from './support/page-checks.js';

jest.setTimeout(180_000);

const SHOTS = '/tmp/console-shots-forms';
/** The first stop of Tab on every console page: the link past the navigation. */
const SKIP_LINK = 'a "Skip to the content"';

describe('the admin console forms in a real browser (issue 48; WCAG 2.1 A and AA by axe-core)', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  let chromium: Chromium;
  const contexts: BrowserContext[] = [];
  let offset = 0;
  const now = () => new Date(Date.now() + offset);

  beforeAll(async () => {
    const started = await Promise.allSettled([
      startAtIssuer({ LOGIN_THROTTLE_ENABLED: 'false' }).then((value) => ({ nest, issuer } = value)),
      launchChromium().then((value) => (chromium = value.browser)),
    ]);
    const failure = started.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
    jest.spyOn(nest.get(Clock), 'now').mockImplementation(now);
    await nest.get(IdentityProvidersService).create({ id: 'contoso', displayName: 'Contoso', protocol: 'oidc', settings: { issuer: 'http://127.0.0.1:9/contoso', clientId: 'latchkey', createAccounts: false } }, 'cli');
    mkdirSync(SHOTS, { recursive: true });
  });
  afterAll(async () => {
    await Promise.allSettled(contexts.map((context) => context.close()));
    await chromium?.close();
    await nest?.close();
    await dropTestDatabase();
    delete process.env.LOGIN_THROTTLE_ENABLED;
  });

  const heading = (page: PlaywrightPage): Promise<string | null> => page.getByRole('heading', { level: 1 }).textContent();
  const shoot = (page: PlaywrightPage, name: string) => page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });

  async function follow(page: PlaywrightPage, role: 'link' | 'button', name: string | RegExp, path: RegExp | string): Promise<void> {
    const matches = (url: URL) => (typeof path === 'string' ? url.pathname === path : path.test(url.pathname));
    await Promise.all([page.waitForURL(matches), page.getByRole(role, { name, exact: typeof name === 'string' }).click()]);
  }

  /** Presses Tab until the element with this id, name=value or text has the focus: the keyboard alone. */
  async function tabTo(page: PlaywrightPage, target: string): Promise<void> {
    for (let i = 0; i < 60; i++) {
      await page.keyboard.press('Tab');
      const here = await page.evaluate(() => {
        const active = (globalThis as unknown as { document: { activeElement: { id: string; textContent: string | null; getAttribute(n: string): string | null; value?: string } | null } }).document.activeElement;
        return active ? [active.id, `${active.getAttribute('name')}=${active.value ?? ''}`, (active.textContent ?? '').trim()] : [];
      });
      if (here.includes(target)) return;
    }
    throw new Error(`Tab never reached ${target}`);
  }

  it('an owner adds a person by keyboard, edits them, gives a role, links and unlinks an identity, edits a client and has a registration refused', async () => {
    const owner = await consolePerson(nest, ['owner']);
    const { client } = await nest.get(ClientsService).create({ name: 'Payroll', redirectUris: ['https://payroll.example/cb'], scope: 'openid' });
    const { page, watcher } = await openWindowAt(chromium, contexts, issuer.origin);

    await page.goto(`${issuer.origin}/admin/people`);
    await page.getByLabel('Username').fill(owner.username);
    await page.getByLabel('Password').fill(owner.password);
    await Promise.all([page.waitForURL((url) => url.pathname === '/login/code'), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
    offset += 30_000;
    await page.locator('input#code').fill(totpCode(owner.key!, now()));
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Continue' }).click()]);
    await follow(page, 'button', 'Allow', '/admin/people');
    await shoot(page, 'people');
    await expectAccessible(page, watcher, SKIP_LINK);

    // Add a person from the keyboard alone: a taken username first, then one that is free.
    await page.mouse.click(1, 1);
    await tabTo(page, 'Add a person');
    await Promise.all([page.waitForURL((url) => url.pathname === '/admin/people/new'), page.keyboard.press('Enter')]);
    expect(await heading(page)).toBe('Add a person');
    await shoot(page, 'person-new');
    await expectAccessible(page, watcher, SKIP_LINK);
    await page.mouse.click(1, 1);
    await tabTo(page, 'username');
    await page.keyboard.type(owner.username);
    await tabTo(page, 'name');
    await page.keyboard.type('Ada Lovelace');
    await tabTo(page, 'email');
    await page.keyboard.type('ada@example.org');
    // The invitation is ticked already.
    await expect(page.getByRole('checkbox', { name: /invitation/ }).isChecked()).resolves.toBe(true);
    await tabTo(page, 'Add the person');
    await Promise.all([page.waitForLoadState('load'), page.keyboard.press('Enter')]);
    await page.getByRole('alert').waitFor();
    await expect(page.getByRole('alert').textContent()).resolves.toContain(`A user named '${owner.username}' already exists.`);
    await expect(page.locator('#username').getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(page.locator('#username-error').textContent()).resolves.toContain('already exists');
    await expect(page.locator('#name').inputValue()).resolves.toBe('Ada Lovelace');
    await shoot(page, 'person-new-error');
    await expectAccessible(page, watcher, SKIP_LINK);
    await page.mouse.click(1, 1);
    // The summary's link takes the focus to the field.
    await tabTo(page, `A user named '${owner.username}' already exists.`);
    await page.keyboard.press('Enter');
    await expect(page.evaluate(() => (globalThis as unknown as { document: { activeElement: { id: string } } }).document.activeElement.id)).resolves.toBe('username');
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('ada');
    await Promise.all([page.waitForURL((url) => /^\/admin\/people\/[0-9a-f-]{36}$/.test(url.pathname)), page.keyboard.press('Enter')]);
    const ada = await nest.get(UsersService).require('ada');
    expect(ada).toMatchObject({ name: 'Ada Lovelace', email: 'ada@example.org' });
    expect(await heading(page)).toBe('ada');
    // No SMTP server here: she is added, and the notice says why no invitation went out.
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/^ada is added, but no invitation was sent: Email is not set up/);
    await shoot(page, 'person-added');
    await expectAccessible(page, watcher, SKIP_LINK);

    // Edit her profile.
    await follow(page, 'link', 'Edit the profile', `/admin/people/${ada.id}/edit`);
    await shoot(page, 'person-edit');
    await expectAccessible(page, watcher, SKIP_LINK);
    await page.getByLabel('Given name').fill('Ada');
    await page.getByLabel('Require a second factor').check();
    await follow(page, 'button', 'Save the profile', `/admin/people/${ada.id}`);
    await expect(page.getByRole('status').textContent()).resolves.toBe('The profile of ada is saved.');
    expect(await nest.get(UsersService).require('ada')).toMatchObject({ givenName: 'Ada', requireMfa: true });

    // Make her an auditor and a help desk.
    await follow(page, 'link', 'Change the roles', `/admin/people/${ada.id}/roles`);
    await shoot(page, 'person-roles');
    await expectAccessible(page, watcher, SKIP_LINK);
    await page.getByRole('checkbox', { name: 'auditor' }).check();
    await page.getByRole('checkbox', { name: 'helpdesk' }).check();
    await follow(page, 'button', 'Save the roles', `/admin/people/${ada.id}`);
    await expect(page.getByRole('status').textContent()).resolves.toBe('ada now holds the roles auditor, helpdesk.');

    // Link an upstream identity, then unlink it after the confirmation.
    await follow(page, 'link', 'Link an upstream identity', `/admin/people/${ada.id}/upstream-links/new`);
    await shoot(page, 'person-link');
    await expectAccessible(page, watcher, SKIP_LINK);
    await page.getByLabel('Identity provider (id)').fill('contoso');
    await page.getByLabel('Subject at the provider').fill('auth0|ada/1');
    await follow(page, 'button', 'Link', `/admin/people/${ada.id}`);
    await expect(page.locator('tbody tr').filter({ hasText: 'auth0|ada/1' }).count()).resolves.toBe(1);
    await shoot(page, 'person-linked');
    await expectAccessible(page, watcher, SKIP_LINK);
    await follow(page, 'link', 'Unlink auth0|ada/1 at contoso', /\/remove$/);
    await shoot(page, 'person-unlink-confirm');
    await expectAccessible(page, watcher, SKIP_LINK);
    await follow(page, 'button', 'Unlink', `/admin/people/${ada.id}`);
    await expect(page.getByRole('status').textContent()).resolves.toBe('The link to auth0|ada/1 at contoso is removed.');

    // Edit a client: a redirect URI the API refuses first, shown beside its field; then one it takes.
    await page.goto(`${issuer.origin}/admin/clients/${client.id}`);
    await follow(page, 'link', 'Edit the registration', `/admin/clients/${client.id}/edit`);
    expect(await heading(page)).toBe('Edit Payroll');
    await shoot(page, 'client-edit');
    await expectAccessible(page, watcher, SKIP_LINK);
    await page.getByLabel('Name').fill('Payroll (prod)');
    await page.getByLabel('Redirect URIs').fill('http://payroll.example/cb');
    await follow(page, 'button', 'Save the registration', `/admin/clients/${client.id}/edit`);
    await expect(page.locator('#redirect_uris-error').textContent()).resolves.toMatch(/must use https/);
    await expect(page.getByLabel('Name').inputValue()).resolves.toBe('Payroll (prod)');
    await shoot(page, 'client-edit-error');
    await expectAccessible(page, watcher, SKIP_LINK);
    await page.getByLabel('Redirect URIs').fill('https://payroll.example/cb\nhttps://payroll.example/cb2');
    await follow(page, 'button', 'Save the registration', `/admin/clients/${client.id}`);
    await expect(page.getByRole('status').textContent()).resolves.toBe('The registration of Payroll (prod) is saved.');
    expect(await nest.get(ClientsService).findById(client.id)).toMatchObject({ name: 'Payroll (prod)', redirectUris: ['https://payroll.example/cb', 'https://payroll.example/cb2'] });
    await shoot(page, 'client-saved');
    await expectAccessible(page, watcher, SKIP_LINK);

    // Register a client: the redirect URI the API refuses is shown beside its field, and the summary's link leads there.
    await page.goto(`${issuer.origin}/admin/clients/new`);
    await page.getByLabel('Name').fill('Shop');
    await page.getByLabel('Redirect URIs').fill('http://shop.example/cb');
    await follow(page, 'button', 'Register', '/admin/clients');
    expect(await page.title()).toMatch(/^Error: Register a client/);
    await expect(page.locator('#redirect_uris-error').textContent()).resolves.toMatch(/must use https/);
    await expect(page.getByLabel('Redirect URIs').getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(page.getByLabel('Name').inputValue()).resolves.toBe('Shop');
    await page.getByRole('link', { name: /must use https/ }).click();
    await expect(page.evaluate(() => (globalThis as unknown as { document: { activeElement: { id: string } } }).document.activeElement.id)).resolves.toBe('redirect_uris');
    await shoot(page, 'client-new-error');
    await expectAccessible(page, watcher, SKIP_LINK);
  });
});
