/**
 * Issue 48, the admin console's groups, identity providers and resource servers in a real
 * Chromium (support/chromium.ts, driven by playwright-core): an owner creates a group from the
 * keyboard alone and adds a member (after a typo the page points out), adds an OpenID Connect
 * provider (after a refused issuer, shown beside its field), registers a resource server and
 * deletes it. Every new page, with and without problems on its form, is checked for the
 * accessibility basics and by axe-core (support/page-checks.ts), and photographed into
 * /tmp/console-shots/ for a person to look at.
 */
import { jest } from '@jest/globals';
import type { Page as PlaywrightPage } from 'playwright-core';
import { GroupsService } from '../../src/groups/groups.service.js';
import { IdentityProvidersService } from '../../src/identity-providers/identity-providers.service.js';
import { ResourceServersService } from '../../src/resource-servers/resource-servers.service.js';
import { consolePerson, type ConsolePerson } from '../helpers/admin-console.js';
import { ConsoleInChromium, follow, heading, screenshotsAt, SKIP_LINK, tabTo } from './support/console-browser.js';
import { expectAccessible, type Watcher } from './support/page-checks.js';

jest.setTimeout(240_000);

/** Nothing listens there: the provider is only stored, never reached. */
const ISSUER = 'http://127.0.0.1:9/contoso';

describe('the admin console directory pages in a real browser (issue 48; WCAG 2.1 A and AA by axe-core)', () => {
  const suite = new ConsoleInChromium();

  beforeAll(() => suite.start());
  afterAll(() => suite.stop());

  const shoot = screenshotsAt('/tmp/console-shots/');

  /** The page photographed and checked: the basics and axe-core, from the skip link on (Tab followed through the longest form, the identity provider's). */
  async function check(page: PlaywrightPage, watcher: Watcher, name: string): Promise<void> {
    await shoot(page, name);
    await expectAccessible(page, watcher, SKIP_LINK, 2, 50);
  }

  /** The owner signed in on a fresh window, on the dashboard. */
  async function signIn(owner: ConsolePerson): Promise<{ page: PlaywrightPage; watcher: Watcher }> {
    const window = await suite.openWindow();
    await suite.signIn(window.page, owner);
    expect(await heading(window.page)).toBe('Dashboard');
    return window;
  }

  it('an owner creates a group by keyboard and adds a member, adds an identity provider, registers and deletes a resource server', async () => {
    const owner = await consolePerson(suite.nest, ['owner']);
    const member = await consolePerson(suite.nest, []);
    const { page, watcher } = await signIn(owner);

    // Groups: created from the keyboard alone (Tab and Enter), then a member added by username.
    await follow(page, 'link', 'Groups', '/admin/groups');
    await check(page, watcher, 'groups-empty');
    await page.mouse.click(1, 1);
    await tabTo(page, 'Create a group');
    await Promise.all([page.waitForURL((url) => url.pathname === '/admin/groups/new'), page.keyboard.press('Enter')]);
    await check(page, watcher, 'group-new');
    await page.mouse.click(1, 1);
    await tabTo(page, 'display_name');
    await page.keyboard.type('Finance');
    await tabTo(page, 'external_id');
    await Promise.all([page.waitForURL((url) => /^\/admin\/groups\/[0-9a-f-]{36}$/.test(url.pathname)), page.keyboard.press('Enter')]);
    expect(await heading(page)).toBe('Finance');
    await expect(page.getByRole('status').textContent()).resolves.toBe('The group Finance is created. Add its members below.');
    const groupPath = new URL(page.url()).pathname;

    await page.getByLabel('Add a person by their username').fill(`${member.username}x`);
    await follow(page, 'button', 'Add to the group', `${groupPath}/members`);
    await expect(page.getByRole('alert').textContent()).resolves.toContain(`Nobody has the username ${member.username}x`);
    await expect(page.getByLabel('Add a person by their username').getAttribute('aria-invalid')).resolves.toBe('true');
    await check(page, watcher, 'group-member-error');
    // The summary's link takes the focus to the field.
    await page.getByRole('link', { name: /^Nobody has the username/ }).click();
    await expect(page.evaluate(() => (globalThis as unknown as { document: { activeElement: { id: string } } }).document.activeElement.id)).resolves.toBe('username');
    await page.getByLabel('Add a person by their username').fill(member.username);
    await follow(page, 'button', 'Add to the group', groupPath);
    await expect(page.getByRole('status').textContent()).resolves.toBe(`${member.username} is now a member of Finance.`);
    await expect(page.getByRole('link', { name: member.username, exact: true }).count()).resolves.toBe(1);
    await check(page, watcher, 'group');
    const [group] = await suite.nest.get(GroupsService).list();
    expect(await suite.nest.get(GroupsService).members(group.id)).toEqual([{ type: 'user', id: member.userId }]);
    await follow(page, 'link', 'Edit name or external id', `${groupPath}/edit`);
    await check(page, watcher, 'group-edit');
    await follow(page, 'link', 'Cancel', groupPath);
    await follow(page, 'link', 'Delete the group', `${groupPath}/confirm/delete`);
    await check(page, watcher, 'group-delete');
    await follow(page, 'link', 'Groups', '/admin/groups');
    await check(page, watcher, 'groups');

    // An OpenID Connect provider: the protocol first, then its form; a refused issuer is shown beside its field.
    await follow(page, 'link', 'Identity providers', '/admin/identity-providers');
    await check(page, watcher, 'identity-providers-empty');
    await follow(page, 'link', 'Add an identity provider', '/admin/identity-providers/new');
    await check(page, watcher, 'identity-provider-protocol');
    await follow(page, 'button', 'Continue', '/admin/identity-providers/new');
    expect(await heading(page)).toBe('Add an OpenID Connect provider');
    await check(page, watcher, 'identity-provider-new');
    await page.getByLabel('Id', { exact: true }).fill('contoso');
    await page.getByLabel(/^Name/).fill('Contoso');
    await page.getByLabel(/^Email domains/).fill('contoso.com');
    await page.getByLabel('Issuer URL').fill('http://login.contoso.example/');
    await page.getByLabel('Client id').fill('latchkey');
    await page.getByLabel('Environment variable holding the client secret or private key').fill('LATCHKEY_IDP_CONTOSO_SECRET');
    await follow(page, 'button', 'Add the provider', '/admin/identity-providers');
    await expect(page.getByRole('alert').textContent()).resolves.toContain('issuer must be an https URL');
    await expect(page.getByLabel('Issuer URL').getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(page.getByLabel('Client id').inputValue()).resolves.toBe('latchkey');
    await check(page, watcher, 'identity-provider-error');
    await page.getByLabel('Issuer URL').fill(ISSUER);
    await follow(page, 'button', 'Add the provider', '/admin/identity-providers/contoso');
    await expect(page.getByRole('status').textContent()).resolves.toContain('Contoso is added.');
    await expect(page.locator('main').textContent()).resolves.toContain(`${suite.origin}/federation/contoso/callback`);
    await check(page, watcher, 'identity-provider');
    expect(await suite.nest.get(IdentityProvidersService).show('contoso')).toMatchObject({ name: 'Contoso', settings: { issuer: ISSUER, clientAuth: { secret: { env: 'LATCHKEY_IDP_CONTOSO_SECRET' } } } });
    await follow(page, 'link', 'Edit', '/admin/identity-providers/contoso/edit');
    await check(page, watcher, 'identity-provider-edit');
    await page.goto(`${suite.origin}/admin/identity-providers/new?protocol=saml`);
    await check(page, watcher, 'identity-provider-new-saml');
    await follow(page, 'link', 'Identity providers', '/admin/identity-providers');
    await check(page, watcher, 'identity-providers');

    // A resource server: registered, listed, deleted after its confirmation page.
    await follow(page, 'link', 'Resource servers', '/admin/resource-servers');
    await check(page, watcher, 'resource-servers-empty');
    await follow(page, 'link', 'Register a resource server', '/admin/resource-servers/new');
    await check(page, watcher, 'resource-server-new');
    await page.getByLabel('Address (resource URI)').fill('https://orders.example/api');
    await page.getByLabel(/^Name/).fill('Orders API');
    await page.getByLabel('JWT').check();
    await follow(page, 'button', 'Register', '/admin/resource-servers');
    await expect(page.getByRole('status').textContent()).resolves.toBe('Orders API is registered: clients can now ask for tokens for it.');
    await check(page, watcher, 'resource-servers');
    expect(await suite.nest.get(ResourceServersService).list()).toMatchObject([{ uri: 'https://orders.example/api', accessTokenFormat: 'jwt' }]);
    await follow(page, 'link', 'Delete Orders API', /\/confirm\/delete$/);
    await check(page, watcher, 'resource-server-delete');
    await follow(page, 'button', 'Delete the resource server', '/admin/resource-servers');
    await expect(page.getByRole('status').textContent()).resolves.toBe('The resource server Orders API was deleted.');
    expect(await suite.nest.get(ResourceServersService).list()).toEqual([]);
  });
});
