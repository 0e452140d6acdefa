/**
 * Issue 46, a client that requires a group, in a real browser: a relying party (openid-client)
 * sends a person who is not in the group to Latchkey; after the password they see the "no access"
 * page (403) naming the application and where they will be sent, and its button returns them to
 * the relying party's redirect URI (support/callback-server.ts) with error=access_denied (RFC 6749
 * §4.1.2.1) and the request's state. A member of the group gets through to the consent page.
 * Every page is checked for the accessibility basics and by axe-core, and photographed into
 * /tmp/shots (SCREENSHOTS_DIR).
 */
import { jest } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import * as oidc from 'openid-client';
import type { Browser as Chromium, BrowserContext, Page as PlaywrightPage } from 'playwright-core';
import { GroupsClaimSetting } from '../../src/clients/client.entity.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { GroupsService } from '../../src/groups/groups.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { callbackServer } from './support/callback-server.js';
import { launchChromium } from './support/chromium.js';
import { expectAccessible, openWindowAt, screenshot } from './support/page-checks.js';

jest.setTimeout(120_000);

const PASSWORD = 'correct horse battery staple';

describe('a client that requires a group, in a real browser (issue 46; WCAG 2.1 A and AA by axe-core)', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  let callbacks: Awaited<ReturnType<typeof callbackServer>>;
  let chromium: Chromium;
  let rp: oidc.Configuration;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    const started = await Promise.allSettled([
      startAtIssuer({ LOGIN_THROTTLE_ENABLED: 'false' }).then((value) => ({ nest, issuer } = value)),
      callbackServer().then((value) => (callbacks = value)),
      launchChromium().then((value) => (chromium = value.browser)),
    ]);
    const failure = started.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
    const users = nest.get(UsersService);
    const alice = await users.create('alice', PASSWORD);
    await users.create('carol', PASSWORD);
    await users.updateProfile('carol', { name: 'Carol Jones' });
    const engineering = await nest.get(GroupsService).create({ displayName: 'Engineering', members: [{ type: 'user', id: alice.id }] }, 'test');
    const clients = nest.get(ClientsService);
    const { client, secret } = await clients.create({ name: 'Engineering wiki', redirectUris: [callbacks.redirectUri], scope: 'notes:read' });
    await clients.setGroupSettings(client.id, { requiredGroups: [engineering.id], groupsClaim: GroupsClaimSetting.Names });
    rp = await oidc.discovery(issuer, client.id, undefined, oidc.ClientSecretBasic(secret!), { execute: [oidc.allowInsecureRequests] });
  });

  afterAll(async () => {
    await Promise.allSettled(contexts.map((context) => context.close()));
    await chromium?.close();
    callbacks?.server.closeAllConnections();
    await new Promise((resolve) => callbacks?.server.close(resolve));
    await nest?.close();
    await dropTestDatabase();
  });

  const openWindow = () => openWindowAt(chromium, contexts, issuer.origin);

  /** The relying party's request (openid-client), and what it needs to redeem the answer. */
  const requests = new Map<string, { verifier: string; nonce: string }>();
  async function authorizationUrl(state: string): Promise<URL> {
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    requests.set(state, { verifier, nonce });
    return oidc.buildAuthorizationUrl(rp, { redirect_uri: callbacks.redirectUri, scope: 'openid profile', state, nonce, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
  }

  async function signIn(page: PlaywrightPage, username: string): Promise<number | undefined> {
    await page.locator('input#username').fill(username);
    await page.locator('input#password').fill(PASSWORD);
    const [response] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
    return response?.status();
  }

  const heading = (page: PlaywrightPage): Promise<string | null> => page.getByRole('heading', { level: 1 }).textContent();

  it('a person outside the group sees the "no access" page, and its button takes them back to the application with error=access_denied', async () => {
    const { page, watcher } = await openWindow();
    await page.goto((await authorizationUrl('state-carol')).href);
    expect(await heading(page)).toBe('Sign in');
    await screenshot(page, 'group-login');
    await expectAccessible(page, watcher, 'input#username');

    expect(await signIn(page, 'carol')).toBe(403);
    expect(await heading(page)).toBe('No access to Engineering wiki');
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Your organization has not given you access to Engineering wiki.');
    await expect(page.locator('main').textContent()).resolves.toContain('Signed in as Carol Jones (carol)');
    await expect(page.locator('main').textContent()).resolves.toContain('127.0.0.1');
    await screenshot(page, 'no-access');
    await expectAccessible(page, watcher, 'button[decision=deny]');

    // From the keyboard: Tab from the top reaches the button first; Enter sends the person back.
    await page.keyboard.press('Tab');
    await expect(page.locator(':focus').textContent()).resolves.toBe('Return to Engineering wiki');
    await page.locator('button[name="decision"]').focus();
    const callback = callbacks.next();
    await Promise.all([page.waitForURL((url) => url.href.startsWith(callbacks.redirectUri)), page.keyboard.press('Enter')]);
    const received = await callback;
    expect(received.searchParams.get('error')).toBe('access_denied');
    expect(received.searchParams.get('state')).toBe('state-carol');
    expect(received.searchParams.get('iss')).toBe(issuer.origin);
    expect(received.searchParams.has('code')).toBe(false);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Back at Expense reports');
  });

  it('"Sign in as someone else" from the page: a member of the group gets to the consent page', async () => {
    const { page, watcher } = await openWindow();
    await page.goto((await authorizationUrl('state-switch')).href);
    expect(await signIn(page, 'carol')).toBe(403);
    // The same authorization request with prompt=login: the sign-in form again, for the same application.
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Sign in as someone else' }).click()]);
    expect(await heading(page)).toBe('Sign in');
    await expect(page.locator('.lead').textContent()).resolves.toBe('to continue to Engineering wiki');
    await signIn(page, 'alice');
    expect(await heading(page)).toBe('Engineering wiki wants to access your account');
    await screenshot(page, 'group-member-consent');
    await expectAccessible(page, watcher, 'button[decision=deny]');

    // Allowed: the stock relying party redeems the code, checks the ID token, and reads the groups claim there and at userinfo.
    const callback = callbacks.next();
    await Promise.all([page.waitForURL((url) => url.href.startsWith(callbacks.redirectUri)), page.getByRole('button', { name: 'Allow' }).click()]);
    const { verifier, nonce } = requests.get('state-switch')!;
    const tokens = await oidc.authorizationCodeGrant(rp, await callback, { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: 'state-switch', idTokenExpected: true });
    expect(tokens.claims()).toMatchObject({ groups: ['Engineering'] });
    await expect(oidc.fetchUserInfo(rp, tokens.access_token, tokens.claims()!.sub)).resolves.toMatchObject({ groups: ['Engineering'] });
  });
});
