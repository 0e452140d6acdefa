/**
 * Sign-in through the company's identity provider in a real browser (issue 45): headless Chromium
 * (support/chromium.ts, driven by playwright-core) follows a stock relying party's authorization
 * request (openid-client) to Latchkey's sign-in page, takes "Sign in with Contoso" to the upstream
 * (node-oidc-provider in its own process, test/fixtures/upstream/oidc-provider-idp.mjs), signs in
 * there, allows on our consent page, and lands on the relying party's redirect URI (a small HTTP
 * server of this test) with a code that redeems for our ID token with the mapped claims. An
 * upstream that cannot be reached ends on a clear page with a way back, not in a redirect loop.
 * Our pages are checked for accessibility basics (support/a11y.ts) and by axe-core and photographed into
 * test-results/screenshots/ (kept by CI).
 */
import { jest } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import * as oidc from 'openid-client';
import type { Browser as Chromium, BrowserContext, Page as PlaywrightPage } from 'playwright-core';
import { ClientsService } from '../../src/clients/clients.service.js';
import { PROJECT_ROOT } from '../../src/common/project-root.js';
import { IdentityProvidersService } from '../../src/identity-providers/identity-providers.service.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { UpstreamOpenIdProvider } from '../federation/support/upstream-openid-provider.js';
import { tabOrder } from './support/a11y.js';
import { callbackServer } from './support/callback-server.js';
import { launchChromium } from './support/chromium.js';
import { expectAccessible as expectPageAccessible, openWindowAt } from './support/page-checks.js';


jest.setTimeout(120_000);

const DATABASE = process.env.TEST_DATABASE_URL ? 'postgres' : 'sqlite';
const SCREENSHOTS = join(PROJECT_ROOT, 'test-results', 'screenshots');
const UPSTREAM_SECRET = 'contoso-secret-for-latchkey-0123456789';

describe('sign-in through an upstream OpenID Connect provider in a real browser (issue 45; WCAG 2.x basics)', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  let contoso: UpstreamOpenIdProvider;
  let callbacks: Awaited<ReturnType<typeof callbackServer>>;
  let chromium: Chromium;
  let rp: oidc.Configuration;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    // Started together, each kept as soon as it is up: if one fails (no browser), afterAll still stops the others.
    const started = await Promise.allSettled([
      startAtIssuer({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', CONTOSO_SECRET: UPSTREAM_SECRET }).then(async (value) => {
        ({ nest, issuer } = value);
        contoso = await UpstreamOpenIdProvider.start({ ana: { email: 'ana@contoso.example', email_verified: true, name: 'Ana Silva', preferred_username: 'ana' } }, [
          { client_id: 'latchkey', client_secret: UPSTREAM_SECRET, redirect_uris: [`${issuer.origin}/federation/contoso/callback`], post_logout_redirect_uris: [`${issuer.origin}/federation/contoso/signed-out`], token_endpoint_auth_method: 'client_secret_basic' },
        ]);
      }),
      callbackServer().then((value) => (callbacks = value)),
      launchChromium().then((value) => (chromium = value.browser)),
    ]);
    const failure = started.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
    const providers = nest.get(IdentityProvidersService);
    await providers.create({ id: 'contoso', displayName: 'Contoso', protocol: 'oidc', settings: { issuer: contoso.issuer, clientId: 'latchkey', clientAuth: { method: 'client_secret_basic', secret: { env: 'CONTOSO_SECRET' } }, trustEmail: true, domains: ['contoso.example'] } }, 'test');
    // Nothing listens on port 9: discovery fails at once.
    await providers.create({ id: 'gone', displayName: 'Gone Inc', protocol: 'oidc', settings: { issuer: 'http://127.0.0.1:9', clientId: 'latchkey' } }, 'test');
    const { client, secret } = await nest.get(ClientsService).create({ name: 'Expense reports', redirectUris: [callbacks.redirectUri], scope: 'notes:read' });
    rp = await oidc.discovery(issuer, client.id, undefined, oidc.ClientSecretBasic(secret!), { execute: [oidc.allowInsecureRequests] });
  });

  afterAll(async () => {
    await Promise.allSettled(contexts.map((context) => context.close()));
    await chromium?.close();
    callbacks?.server.closeAllConnections();
    await new Promise((resolve) => callbacks?.server.close(resolve));
    await contoso?.stop();
    await nest?.close();
    await dropTestDatabase();
  });

  const openWindow = () => openWindowAt(chromium, contexts, issuer.origin);

  function screenshot(page: PlaywrightPage, name: string): Promise<Buffer> {
    return page.screenshot({ path: join(SCREENSHOTS, `${DATABASE}-federation-${name}.png`), fullPage: true });
  }

  /** The relying party's authorization request, and how it redeems the callback it receives. */
  async function authorization() {
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(rp, { redirect_uri: callbacks.redirectUri, scope: 'openid email profile', nonce, state, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
    return { url, redeem: (callback: URL) => oidc.authorizationCodeGrant(rp, callback, { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state, idTokenExpected: true }) };
  }


  it('the relying party\'s request, "Sign in with Contoso", the upstream\'s form, our consent: the relying party\'s code redeems for our ID token with the mapped email', async () => {
    const { page, watcher } = await openWindow();
    const request = await authorization();

    // Our sign-in page offers Contoso, reachable from the keyboard like the rest of the page.
    const login = await page.goto(request.url.href);
    expect(login?.status()).toBe(200);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Sign in');
    const contosoButton = page.getByRole('link', { name: 'Sign in with Contoso' });
    await expect(contosoButton.isVisible()).resolves.toBe(true);
    await screenshot(page, 'login');
    await expectPageAccessible(page, watcher, 'input#username', 3);
    expect((await tabOrder(page)).map((stop) => stop.element)).toContain('a#upstream-contoso');

    // Off to Contoso's own form.
    await Promise.all([page.waitForURL((url) => url.origin === contoso.issuer), contosoButton.click()]);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Contoso sign-in');
    await page.locator('input[name="login"]').fill('ana');
    await Promise.all([page.waitForURL((url) => url.origin === issuer.origin && url.pathname === '/authorize'), page.getByRole('button', { name: 'Sign in' }).click()]);

    // Back here, signed in as the just-in-time account: our consent page.
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Expense reports wants to access your account');
    await expect(page.locator('.lead').textContent()).resolves.toBe('Signed in as ana');
    await screenshot(page, 'consent');
    await expectPageAccessible(page, watcher, 'button[decision=deny]', 3);

    const callback = callbacks.next();
    await Promise.all([page.waitForURL((url) => url.href.startsWith(callbacks.redirectUri)), page.getByRole('button', { name: 'Allow' }).click()]);
    const received = await callback;
    expect(received.searchParams.get('iss')).toBe(issuer.origin);
    const claims = (await request.redeem(received)).claims()!;
    expect(claims).toMatchObject({ iss: issuer.origin, email: 'ana@contoso.example', email_verified: true, name: 'Ana Silva', preferred_username: 'ana', amr: ['fed'] });
  });

  it('an upstream that cannot be reached: a clear page naming it, with a way back to the sign-in page, and no redirect loop', async () => {
    const { page, watcher } = await openWindow();
    const navigations: string[] = [];
    page.on('request', (request) => {
      if (request.isNavigationRequest()) navigations.push(new URL(request.url()).pathname);
    });
    await page.goto((await authorization()).url.href);
    const [failed] = await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Sign in with Gone Inc' }).click()]);
    expect(failed?.status()).toBe(502);
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Gone Inc could not be reached');
    const back = page.getByRole('link', { name: 'Start again' });
    expect(new URL((await back.getAttribute('href'))!, issuer).pathname).toBe('/login');
    await screenshot(page, 'unreachable');
    await expectPageAccessible(page, watcher, 'a "Start again"', 3);
    // One trip to our start route, no redirect anywhere (let alone back upstream or round again).
    expect(navigations).toEqual(['/authorize', '/federation/gone/start']);
    expect(new URL(page.url()).pathname).toBe('/federation/gone/start');

    // The way back: the sign-in page, still for the relying party's request.
    await Promise.all([page.waitForURL((url) => url.pathname === '/login'), back.click()]);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Sign in');
    await expect(page.locator('.lead').textContent()).resolves.toContain('Expense reports');
    await expect(page.getByRole('link', { name: 'Sign in with Contoso' }).isVisible()).resolves.toBe(true);
  });

  it('a work address on our sign-in form goes to Contoso, and signing out here signs out there too: the browser follows both form POSTs on to Contoso (CSP form-action lists its origin)', async () => {
    const { page } = await openWindow();
    await page.goto(new URL('/login', issuer).href);
    await page.locator('input#username').fill('ana@contoso.example');
    // No password: home-realm discovery. The POST's redirects lead to Contoso's form.
    await Promise.all([page.waitForURL((url) => url.origin === contoso.issuer), page.getByRole('button', { name: 'Sign in' }).click()]);
    await page.locator('input[name="login"]').fill('ana');
    await Promise.all([page.waitForURL((url) => url.origin === issuer.origin && url.pathname === '/account'), page.getByRole('button', { name: 'Sign in' }).click()]);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Your account');

    // Sign out here: the POST goes on to Contoso's sign-out, then back home, signed out.
    await Promise.all([page.waitForURL((url) => url.origin === contoso.issuer), page.getByRole('button', { name: 'Sign out', exact: true }).click()]);
    await Promise.all([page.waitForURL((url) => url.origin === issuer.origin && url.pathname === '/'), page.getByRole('button', { name: 'Sign out', exact: true }).click()]);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Latchkey');
  });
});
