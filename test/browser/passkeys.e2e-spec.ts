/**
 * Passkeys in a real browser (issue 33): headless Chromium with the DevTools Protocol's virtual
 * authenticator (a CTAP2 platform authenticator that keeps discoverable credentials and verifies
 * the user) against the real app at http://localhost:<port> (WebAuthn needs a domain, and
 * localhost is a secure context). A person signs in with a password, adds a passkey on the
 * account page, signs out, then signs in with the passkey alone through an authorization request
 * of a stock OpenID client (openid-client), which redeems the code for an ID token.
 */
import { jest } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import * as oidc from 'openid-client';
import type { Browser as Chromium, BrowserContext, CDPSession, Page } from 'playwright-core';
import { LoginSession } from '../../src/auth/interaction/login-session.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { Clock } from '../../src/common/clock.js';
import { PROJECT_ROOT } from '../../src/common/project-root.js';
import { PasskeysService } from '../../src/passkeys/passkeys.service.js';
import { PasskeyTestApp } from '../helpers/passkeys.js';
import { pageStructure, textContrast, watchPage } from './support/a11y.js';
import { launchChromium } from './support/chromium.js';

jest.setTimeout(120_000);

const DATABASE = process.env.TEST_DATABASE_URL ? 'postgres' : 'sqlite';
const SCREENSHOTS = join(PROJECT_ROOT, 'test-results', 'screenshots');

/** The client's redirect endpoint: hands each callback URL to whoever waits for it. */
async function callbackServer(): Promise<{ server: Server; redirectUri: string; next: () => Promise<URL> }> {
  const waiting: ((url: URL) => void)[] = [];
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', redirectUri);
    waiting.splice(0).forEach((resolve) => resolve(url));
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Demo client</title><p>Back at the client.</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
  return { server, redirectUri, next: () => new Promise((resolve) => waiting.push(resolve)) };
}

describe('passkeys in a real browser with a virtual authenticator', () => {
  let app: PasskeyTestApp;
  let chromium: Chromium;
  let context: BrowserContext;
  let callbacks: Awaited<ReturnType<typeof callbackServer>>;

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const started = await Promise.allSettled([
      PasskeyTestApp.start().then((value) => (app = value)),
      callbackServer().then((value) => (callbacks = value)),
      launchChromium().then((value) => (chromium = value.browser)),
    ]);
    const failure = started.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
  });
  afterAll(async () => {
    await context?.close();
    await chromium?.close();
    callbacks?.server.closeAllConnections();
    await new Promise((resolve) => callbacks?.server.close(resolve));
    await app?.stop();
  });

  async function virtualAuthenticator(page: Page): Promise<{ cdp: CDPSession; authenticatorId: string }> {
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable', { enableUI: false });
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    return { cdp, authenticatorId };
  }

  it('adds a passkey on the account page, then signs in with it alone through openid-client and gets an ID token', async () => {
    const user = await app.createUser('grace.hopper', 'cobol 1959 compiler');
    const { client, secret } = await app.nest.get(ClientsService).create({ name: 'Demo client', redirectUris: [callbacks.redirectUri], scope: 'notes:read', grantTypes: ['authorization_code'] as never });
    const config = await oidc.discovery(new URL(app.origin), client.id, undefined, oidc.ClientSecretBasic(secret!), { execute: [oidc.allowInsecureRequests] });

    context = await chromium.newContext({ viewport: { width: 1024, height: 768 }, locale: 'en-US' });
    context.setDefaultTimeout(15_000);
    const page = await context.newPage();
    const watcher = watchPage(page, app.origin);
    const { cdp, authenticatorId } = await virtualAuthenticator(page);

    // A password sign-in, then the account page.
    await page.goto(`${app.origin}/login`);
    await page.getByLabel('Username').fill(user.username);
    await page.getByLabel('Password').fill(user.password);
    await Promise.all([page.waitForURL(`${app.origin}/account`), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
    await Promise.all([page.waitForURL(`${app.origin}/account/passkeys`), page.getByRole('link', { name: 'Add a passkey' }).click()]);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Passkeys');

    // Add a named passkey: the browser creates it on the virtual authenticator.
    await page.getByLabel('Name of the new passkey').fill('Virtual key');
    await Promise.all([page.waitForURL(`${app.origin}/account/passkeys?done=added`), page.getByRole('button', { name: 'Add a passkey' }).click()]);
    await expect(page.getByRole('status').textContent()).resolves.toBe('Your passkey was added.');
    await expect(page.locator('ul.passkeys h2').allTextContents()).resolves.toEqual(['Virtual key']);
    await page.screenshot({ path: join(SCREENSHOTS, `${DATABASE}-passkeys-account.png`), fullPage: true });
    // The account page has the basics every page has: lang, title, one h1, main, labelled controls, contrast.
    await expect(pageStructure(page)).resolves.toEqual({ lang: 'en', title: 'Passkeys · Latchkey', h1Count: 1, mainCount: 1, unlabelledControls: [], stylesheetsLoaded: true, icon: 'data:,' });
    await expect(textContrast(page).then((report) => report.failures)).resolves.toEqual([]);
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0].isResidentCredential).toBe(true);
    expect(credentials[0].rpId).toBe('localhost');
    expect(await app.nest.get(PasskeysService).countFor(user.id)).toBe(1);

    // Sign out.
    await page.goto(`${app.origin}/`);
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('link', { name: 'Sign in' }).waitFor();

    // The client sends the person to sign in; they use the passkey and nothing else.
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const authorize = oidc.buildAuthorizationUrl(config, { redirect_uri: callbacks.redirectUri, scope: 'openid', state, nonce, acr_values: 'urn:latchkey:acr:phr', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
    const logIn = jest.spyOn(app.nest.get(LoginSession), 'logIn');
    // With presence simulated, Chromium's virtual authenticator would answer the autofill request
    // at once (tested last): off while the page loads, so that the button is what signs in here.
    await cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled: false });
    await page.goto(authorize.href);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Sign in');
    const passkeyButton = page.getByRole('button', { name: 'Sign in with a passkey' });
    await passkeyButton.waitFor({ state: 'visible' });
    // The page's autofill request (conditional mediation) waits for a person to pick the passkey;
    // the virtual authenticator answers requests by itself again only now, for the button's.
    await page.waitForLoadState('networkidle');
    await cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled: true });
    await page.screenshot({ path: join(SCREENSHOTS, `${DATABASE}-passkeys-login.png`), fullPage: true });
    // The sign-in page is shown at the /authorize URL; after the passkey, the same URL shows the consent page.
    await passkeyButton.click();
    await expect(page.getByRole('heading', { level: 1, name: 'Demo client wants to access your account' }).waitFor()).resolves.toBeUndefined();
    expect(logIn.mock.calls.map((call) => call[2])).toEqual([['hwk', 'user', 'mfa']]);
    logIn.mockRestore();

    // Consent, then the client redeems the code: an ID token for this person.
    const callback = callbacks.next();
    await Promise.all([page.waitForURL((url) => url.href.startsWith(callbacks.redirectUri)), page.getByRole('button', { name: 'Allow' }).click()]);
    const tokens = await oidc.authorizationCodeGrant(config, await callback, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
    const claims = tokens.claims()!;
    expect(claims.iss).toBe(app.origin);
    expect(claims.aud).toBe(client.id);
    expect(typeof claims.sub).toBe('string');
    expect(claims.auth_time).toBeGreaterThan(Math.floor(Date.now() / 1000) - 120);
    // Phishing-resistant (RFC 8176: a hardware-held key, the person verified by it, two factors in one).
    expect(claims.acr).toBe('urn:latchkey:acr:phr');
    expect(claims.amr).toEqual(['hwk', 'user', 'mfa']);
    const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
    expect(info.preferred_username ?? claims.sub).toBeTruthy();

    // The passkey's last use is on the account page now.
    const [summary] = await app.nest.get(PasskeysService).listFor(user.id);
    expect(summary.lastUsedAt).not.toBeNull();
    await page.waitForLoadState('networkidle');
    expect(watcher.problems()).toEqual({ consoleErrors: [], pageErrors: [], failedRequests: [] });
  });

  it("the browser's autofill offers the passkey on the sign-in page (conditional mediation) and signs in with it; later it confirms a change", async () => {
    const user = await app.createUser('katherine.johnson', 'orbital mechanics 1962');
    const page = await context.newPage();
    const watcher = watchPage(page, app.origin);
    await context.clearCookies();
    const { cdp, authenticatorId } = await virtualAuthenticator(page);
    await page.goto(`${app.origin}/login`);
    await page.getByLabel('Username').fill(user.username);
    await page.getByLabel('Password').fill(user.password);
    await Promise.all([page.waitForURL(`${app.origin}/account`), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
    await page.goto(`${app.origin}/account/passkeys`);
    await page.getByLabel('Name of the new passkey').fill('Autofill key');
    await Promise.all([page.waitForURL(`${app.origin}/account/passkeys?done=added`), page.getByRole('button', { name: 'Add a passkey' }).click()]);
    await page.goto(`${app.origin}/`);
    // Already at /: the signed-out home page's link says the sign-out's redirect has landed.
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('link', { name: 'Sign in' }).waitFor();
    expect((await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials).toHaveLength(1);

    // Nothing clicked: the autofill request, answered by the authenticator (presence simulated), signs in.
    const logIn = jest.spyOn(app.nest.get(LoginSession), 'logIn');
    await Promise.all([page.waitForURL(`${app.origin}/account`), page.goto(`${app.origin}/login`)]);
    await expect(page.locator('.lead').textContent()).resolves.toBe(`You are signed in as ${user.username}.`);
    expect(logIn.mock.calls.map((call) => call[2])).toEqual([['hwk', 'user', 'mfa']]);
    logIn.mockRestore();

    // Six minutes on, the account page asks to confirm before a change; the passkey confirms it.
    const clock = jest.spyOn(app.nest.get(Clock), 'now').mockImplementation(() => new Date(Date.now() + 6 * 60_000));
    try {
      await page.goto(`${app.origin}/account/passkeys`);
      await expect(page.getByRole('heading', { level: 2, name: "Confirm it's you" }).isVisible()).resolves.toBe(true);
      await expect(page.getByRole('button', { name: 'Add a passkey' }).count()).resolves.toBe(0);
      const confirm = page.getByRole('button', { name: 'Confirm with a passkey' });
      await confirm.waitFor({ state: 'visible' });
      await confirm.click();
      await page.getByRole('button', { name: 'Add a passkey' }).waitFor();
      await expect(page.getByRole('button', { name: 'Remove the passkey Autofill key' }).isVisible()).resolves.toBe(true);
    } finally {
      clock.mockRestore();
    }
    await page.waitForLoadState('networkidle');
    expect(watcher.problems()).toEqual({ consoleErrors: [], pageErrors: [], failedRequests: [] });
  });
});
