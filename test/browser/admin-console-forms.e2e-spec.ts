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
import { ClientsService } from '../../src/clients/clients.service.js';
import { IdentityProvidersService } from '../../src/identity-providers/identity-providers.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { consolePerson } from '../helpers/admin-console.js';
import { ConsoleInChromium, follow, heading, screenshotsAt, SKIP_LINK, tabTo } from './support/console-browser.js';
import { expectAccessible } from './support/page-checks.js';

jest.setTimeout(180_000);

describe('the admin console forms in a real browser (issue 48; WCAG 2.1 A and AA by axe-core)', () => {
  const suite = new ConsoleInChromium();

  beforeAll(async () => {
    await suite.start();
    await suite.nest.get(IdentityProvidersService).create({ id: 'contoso', displayName: 'Contoso', protocol: 'oidc', settings: { issuer: 'http://127.0.0.1:9/contoso', clientId: 'latchkey', createAccounts: false } }, 'cli');
  });
  afterAll(() => suite.stop());

  const shoot = screenshotsAt('/tmp/console-shots-forms/');

  it('an owner adds a person by keyboard, edits them, gives a role, links and unlinks an identity, edits a client and has a registration refused', async () => {
    const owner = await consolePerson(suite.nest, ['owner']);
    const { client } = await suite.nest.get(ClientsService).create({ name: 'Payroll', redirectUris: ['https://payroll.example/cb'], scope: 'openid' });
    const { page, watcher } = await suite.openWindow();

    await suite.signIn(page, owner, '/admin/people');
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
    const ada = await suite.nest.get(UsersService).require('ada');
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
    expect(await suite.nest.get(UsersService).require('ada')).toMatchObject({ givenName: 'Ada', requireMfa: true });

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
    await page.goto(`${suite.origin}/admin/clients/${client.id}`);
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
    expect(await suite.nest.get(ClientsService).findById(client.id)).toMatchObject({ name: 'Payroll (prod)', redirectUris: ['https://payroll.example/cb', 'https://payroll.example/cb2'] });
    await shoot(page, 'client-saved');
    await expectAccessible(page, watcher, SKIP_LINK);

    // Register a client: the redirect URI the API refuses is shown beside its field, and the summary's link leads there.
    await page.goto(`${suite.origin}/admin/clients/new`);
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
    // The error summary's links come before the form's fields, and the navigation has grown (Sessions): more stops before the button.
    await expectAccessible(page, watcher, SKIP_LINK, 2, 40);
  });
});
