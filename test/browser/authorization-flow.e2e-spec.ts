/**
 * The authorization-code flow as a person does it, in a real browser: headless Chromium (found by
 * support/chromium.ts, driven by playwright-core) against the real app on a real port, with the client's
 * redirect URI served by a small HTTP server of this test. Each page is checked for accessibility
 * basics (support/a11y.ts) and photographed into test-results/screenshots/ (kept by CI).
 */
import { jest } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser as Chromium, BrowserContext, Page as PlaywrightPage } from 'playwright-core';
import { PROJECT_ROOT } from '../../src/common/project-root.js';
import { appConfig } from '../../src/config/app.config.js';
import { authorizeUrl, newPkce, tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';
import { pageStructure, submitButtons, tabOrder, textContrast, watchPage } from './support/a11y.js';
import { launchChromium } from './support/chromium.js';
import { openWindowAt } from './support/page-checks.js';

type Watcher = ReturnType<typeof watchPage>;

jest.setTimeout(120_000);

const DATABASE = process.env.TEST_DATABASE_URL ? 'postgres' : 'sqlite';
const SCREENSHOTS = join(PROJECT_ROOT, 'test-results', 'screenshots');

/** The client application's redirect endpoint: records each request and shows a small page. */
class ClientServer {
  readonly received: URL[] = [];
  private waiting: ((url: URL) => void)[] = [];

  private constructor(
    private readonly server: Server,
    readonly origin: string,
  ) {}

  static async start(): Promise<ClientServer> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = new ClientServer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on('request', (request, response) => {
      const url = new URL(request.url ?? '/', client.origin);
      if (url.pathname !== '/callback') {
        response.writeHead(404).end();
        return;
      }
      client.received.push(url);
      client.waiting.splice(0).forEach((resolve) => resolve(url));
      const rows = [...url.searchParams].map(([name, value]) => `<tr><th scope="row">${escapeHtml(name)}</th><td>${escapeHtml(value)}</td></tr>`).join('');
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Demo client</title></head>` +
          `<body><main><h1>Demo client: back from Latchkey</h1><table>${rows}</table></main></body></html>`,
      );
    });
    return client;
  }

  /** The next request to /callback. */
  nextCallback(): Promise<URL> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}

describe('the authorization-code flow in a real browser (RFC 6749 §4.1, RFC 7636, RFC 9207; WCAG 2.x basics)', () => {
  let app: TestApp;
  let issuer: string;
  let callbacks: ClientServer;
  let client: RegisteredClient;
  let user: TestUser;
  let chromiumBrowser: Chromium;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    // Started together, but each kept as soon as it is up: if one fails (no browser), afterAll
    // still stops the others, so the failure stays in this suite and leaves nothing running.
    const started = await Promise.allSettled([
      TestApp.start().then((value) => (app = value)),
      ClientServer.start().then((value) => (callbacks = value)),
      launchChromium().then((value) => (chromiumBrowser = value.browser)),
    ]);
    const failure = started.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
    issuer = app.app.get(appConfig.KEY).issuer;
    client = await app.createClient({ name: 'Acme Notes', redirectUris: [`${callbacks.origin}/callback`], scope: 'notes:read notes:write photos:read' });
    user = await app.createUser('ada.lovelace', 'analytical engine 1843');
  });

  afterAll(async () => {
    await Promise.allSettled(contexts.map((context) => context.close()));
    await chromiumBrowser?.close();
    await callbacks?.stop();
    await app?.stop();
  });

  const openWindow = () => openWindowAt(chromiumBrowser, contexts, app.baseUrl);

  function screenshot(page: PlaywrightPage, name: string): Promise<Buffer> {
    return page.screenshot({ path: join(SCREENSHOTS, `${DATABASE}-${name}.png`), fullPage: true });
  }

  /**
   * The basics every page must have: lang, title, one h1, a main landmark, a label for each
   * control, text contrast (SC 1.4.3), Tab from the top reaching `firstStop` first and every
   * submit button, each with a visible focus indicator of 3:1 (SC 2.4.7, 1.4.11), and no console
   * errors, page errors or failed requests for the page's own assets.
   */
  async function expectAccessible(page: PlaywrightPage, watcher: Watcher, firstStop: string | null): Promise<void> {
    const structure = await pageStructure(page);
    expect(structure).toEqual({ lang: 'en', title: expect.stringMatching(/\S · Latchkey$/), h1Count: 1, mainCount: 1, unlabelledControls: [], stylesheetsLoaded: true, icon: 'data:,' });

    const contrast = await textContrast(page);
    expect(contrast.failures).toEqual([]);
    expect(contrast.checked).toBeGreaterThanOrEqual(3);

    const stops = await tabOrder(page);
    expect(stops[0]?.element ?? null).toBe(firstStop);
    expect(stops.filter((stop) => !stop.focusVisible || (stop.outlineContrast !== null && stop.outlineContrast < 3))).toEqual([]);
    const reachable = new Set(stops.map((stop) => stop.element));
    expect((await submitButtons(page)).filter((button) => !reachable.has(button))).toEqual([]);

    await expectCleanLoad(page, watcher);
  }

  /** No console errors, page errors or failed requests, once the page's requests (favicon included) are done. */
  async function expectCleanLoad(page: PlaywrightPage, watcher: Watcher): Promise<void> {
    await page.waitForLoadState('networkidle');
    expect(watcher.problems()).toEqual({ consoleErrors: [], pageErrors: [], failedRequests: [] });
  }

  it('signs in (after a wrong password), allows, and the client redeems the code it receives', async () => {
    const { page, watcher } = await openWindow();
    const pkce = newPkce();
    const state = 'st-' + Math.random().toString(36).slice(2);
    const redirectUri = `${callbacks.origin}/callback`;

    // The login page.
    const login = await page.goto(app.url(authorizeUrl(client, { scope: 'notes:read photos:read', state, code_challenge: pkce.challenge, code_challenge_method: 'S256' })));
    expect(login?.status()).toBe(200);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Sign in');
    await expect(page.locator('.lead').textContent()).resolves.toContain('Acme Notes');
    await screenshot(page, 'login');
    await expectAccessible(page, watcher, 'input#username');

    // A wrong password: the form comes back with an announced error, the username kept.
    await page.getByLabel('Username').fill(user.username);
    await page.getByLabel('Password').fill('not the password');
    const [failed] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
    expect(failed?.status()).toBe(401);
    const alert = page.getByRole('alert');
    await expect(alert.textContent()).resolves.toBe('The username or password is incorrect. Please try again.');
    await expect(alert.isVisible()).resolves.toBe(true);
    await expect(page.getByLabel('Username').inputValue()).resolves.toBe(user.username);
    await expect(page.getByLabel('Password').inputValue()).resolves.toBe('');
    await expect(page.getByLabel('Password').getAttribute('aria-describedby')).resolves.toBe('login-error');
    // With the username kept, the cursor waits in the password field.
    await expect(page.locator(':focus').getAttribute('id')).resolves.toBe('password');
    await screenshot(page, 'login-error');
    await expectAccessible(page, watcher, 'input#username');

    // The right password, typed and sent with Enter as a keyboard user would.
    await page.getByLabel('Password').focus();
    await page.keyboard.type(user.password);
    await Promise.all([page.waitForURL((url) => url.pathname === '/authorize'), page.keyboard.press('Enter')]);

    // The consent page names the client and the scopes in plain words.
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Acme Notes wants to access your account');
    const scopeItems = await page.locator('ul.scopes > li > span').allTextContents();
    expect(scopeItems).toHaveLength(2);
    for (const words of scopeItems) expect(words).toMatch(/^[A-Z][a-z]+( [a-z]+)+/);
    expect(scopeItems.join(' ')).toMatch(/notes/i);
    expect(scopeItems.join(' ')).toMatch(/photos/i);
    await expect(page.locator('ul.scopes code').allTextContents()).resolves.toEqual(['notes:read', 'photos:read']);
    await expect(page.locator('.lead').textContent()).resolves.toBe(`Signed in as ${user.username}`);
    await screenshot(page, 'consent');
    await expectAccessible(page, watcher, 'button[decision=deny]');

    // Allow: the browser lands on the client with a code, the same state and the issuer (RFC 9207).
    const callback = callbacks.nextCallback();
    await Promise.all([page.waitForURL((url) => url.origin === callbacks.origin), page.getByRole('button', { name: 'Allow' }).click()]);
    const received = await callback;
    expect(new URL(page.url()).searchParams.get('code')).toBe(received.searchParams.get('code'));
    expect([...received.searchParams.keys()].sort()).toEqual(['code', 'iss', 'state']);
    expect(received.searchParams.get('code')).toMatch(/^lk_ac_[A-Za-z0-9_-]{43}$/);
    expect(received.searchParams.get('state')).toBe(state);
    expect(received.searchParams.get('iss')).toBe(issuer);
    await screenshot(page, 'client-callback');

    // The code is real: the client's back end trades it (with the PKCE verifier) for tokens.
    const token = await tokenRequest(app, client, { grant_type: 'authorization_code', code: received.searchParams.get('code')!, redirect_uri: redirectUri, code_verifier: pkce.verifier });
    expect(token.status).toBe(200);
    expect(token.body).toMatchObject({ token_type: 'bearer', scope: 'notes:read photos:read', access_token: expect.stringMatching(/^lk_at_/), refresh_token: expect.stringMatching(/^lk_rt_/) });
    const notes = await fetch(app.url('/api/v1/notes'), { headers: { authorization: `Bearer ${token.body.access_token as string}` } });
    expect(notes.status).toBe(200);
    // Only once, and only with the right verifier: the same code again is refused.
    const again = await tokenRequest(app, client, { grant_type: 'authorization_code', code: received.searchParams.get('code')!, redirect_uri: redirectUri, code_verifier: pkce.verifier });
    expect(again).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

    await expectCleanLoad(page, watcher);
  });

  it('Deny sends the person back with error=access_denied and the state (RFC 6749 §4.1.2.1)', async () => {
    const { page, watcher } = await openWindow();
    const pkce = newPkce();
    const state = 'deny-' + Math.random().toString(36).slice(2);
    await page.goto(app.url(authorizeUrl(client, { scope: 'notes:write', state, code_challenge: pkce.challenge, code_challenge_method: 'S256' })));
    await page.getByLabel('Username').fill(user.username);
    await page.getByLabel('Password').fill(user.password);
    await Promise.all([page.waitForURL((url) => url.pathname === '/authorize'), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
    await expect(page.locator('ul.scopes code').allTextContents()).resolves.toEqual(['notes:write']);

    const callback = callbacks.nextCallback();
    await Promise.all([page.waitForURL((url) => url.origin === callbacks.origin), page.getByRole('button', { name: 'Deny' }).click()]);
    const received = await callback;
    expect(received.searchParams.get('error')).toBe('access_denied');
    expect(received.searchParams.get('state')).toBe(state);
    expect(received.searchParams.get('iss')).toBe(issuer);
    expect(received.searchParams.has('code')).toBe(false);
    await screenshot(page, 'denied');
    await expectCleanLoad(page, watcher);
  });

  it('an unregistered redirect_uri shows an error page and never redirects (RFC 6749 §4.1.2.1, §10.15)', async () => {
    const { page, watcher } = await openWindow();
    const before = callbacks.received.length;
    const response = await page.goto(app.url(authorizeUrl(client, { redirect_uri: `${callbacks.origin}/elsewhere`, state: 'x', code_challenge: newPkce().challenge, code_challenge_method: 'S256' })));
    expect(response?.status()).toBe(400);
    expect(new URL(page.url()).origin).toBe(app.baseUrl);
    expect(new URL(page.url()).pathname).toBe('/authorize');
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('This request cannot be completed');
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/redirect/i);
    await expect(page.getByText('invalid_request', { exact: true }).isVisible()).resolves.toBe(true);
    await screenshot(page, 'error');
    // The page has nothing to focus: no link, no form.
    await expectAccessible(page, watcher, null);
    expect(callbacks.received.length).toBe(before);
  });
});
