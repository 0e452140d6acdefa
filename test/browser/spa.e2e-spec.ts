/**
 * A single-page app in a real browser (issue 34, "Checked with real clients"): a static page served
 * from its own origin (another port) runs oauth4webapi's browser build, unmodified, in headless
 * Chromium (support/chromium.ts) against the real app: discovery, authorization code with PKCE and
 * DPoP for a public client, userinfo, a data API read, a create and an update with If-Match, a
 * refresh. Every call is a cross-origin fetch that the browser allows only as Latchkey's CORS
 * answers say. The same page served from an origin no client registered is stopped by the browser
 * at /token: its preflight is not answered, so the code is never sent.
 */
import { jest } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser as Chromium, BrowserContext, Page } from 'playwright-core';
import { ClientsService } from '../../src/clients/clients.service.js';
import { PROJECT_ROOT } from '../../src/common/project-root.js';
import { UsersService } from '../../src/users/users.service.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { launchChromium } from './support/chromium.js';

jest.setTimeout(120_000);

/** The library's browser build, as the page loads it: an ES module with no imports of its own. */
const OAUTH4WEBAPI = readFileSync(join(PROJECT_ROOT, 'node_modules/oauth4webapi/build/index.js'), 'utf8');

/**
 * The app: everything a single-page app does, in the page, with oauth4webapi. `spa.start()`
 * discovers the server and makes the authorization URL (PKCE, state, nonce, a DPoP key pair kept
 * in memory); the person signs in in another tab, as in a popup; `spa.redeem(callbackUrl)` then
 * redeems the code with a DPoP proof, and the other steps use the token. The DPoP nonce the
 * server asks for (RFC 9449 §8, §9) is retried once, as oauth4webapi documents (isDPoPNonceError):
 * the page can do that only if it may read the DPoP-Nonce and WWW-Authenticate headers.
 */
function appPage(issuer: string, clientId: string, redirectUri: string): string {
  const script = `
import * as oauth from '/oauth4webapi.js';
const issuer = new URL(${JSON.stringify(issuer)});
const client = { client_id: ${JSON.stringify(clientId)} };
const redirectUri = ${JSON.stringify(redirectUri)};
const auth = oauth.None();
const options = { [oauth.allowInsecureRequests]: true };
let as, dpop, pending, tokens, subject;

async function retry(attempt) {
  try {
    return await attempt();
  } catch (error) {
    if (oauth.isDPoPNonceError(error)) return attempt();
    throw error;
  }
}
function api(method, path, headers, body) {
  return retry(() => oauth.protectedResourceRequest(tokens.access_token, method, new URL(path, issuer), new Headers(headers), body, { DPoP: dpop, ...options }));
}
async function described(response) {
  return { status: response.status, etag: response.headers.get('etag'), location: response.headers.get('location'), body: response.status === 204 ? null : await response.json() };
}

window.spa = {
  async start() {
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...options }));
    dpop = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
    pending = { verifier: oauth.generateRandomCodeVerifier(), state: oauth.generateRandomState(), nonce: oauth.generateRandomNonce() };
    const url = new URL(as.authorization_endpoint);
    const parameters = { client_id: client.client_id, response_type: 'code', redirect_uri: redirectUri, scope: 'openid notes:read notes:write', state: pending.state, nonce: pending.nonce, code_challenge: await oauth.calculatePKCECodeChallenge(pending.verifier), code_challenge_method: 'S256' };
    for (const [name, value] of Object.entries(parameters)) url.searchParams.set(name, value);
    return url.href;
  },
  verifier() {
    return pending.verifier;
  },
  async redeem(callback) {
    const parameters = oauth.validateAuthResponse(as, client, new URL(callback), pending.state);
    tokens = await retry(async () => oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, auth, parameters, redirectUri, pending.verifier, { DPoP: dpop, ...options }), { expectedNonce: pending.nonce, requireIdToken: true }));
    subject = oauth.getValidatedIdTokenClaims(tokens).sub;
    return { tokenType: tokens.token_type, scope: tokens.scope, subject, refreshToken: typeof tokens.refresh_token === 'string' };
  },
  async userinfo() {
    return retry(async () => oauth.processUserInfoResponse(as, client, subject, await oauth.userInfoRequest(as, client, tokens.access_token, { DPoP: dpop, ...options })));
  },
  async notes() {
    const list = await described(await api('GET', '/api/v1/notes'));
    const created = await described(await api('POST', '/api/v1/notes', { 'content-type': 'application/json' }, JSON.stringify({ title: 'Written from the browser' })));
    const stale = await described(await api('PATCH', created.location, { 'content-type': 'application/merge-patch+json', 'if-match': '"not-the-etag"' }, JSON.stringify({ done: true })));
    const updated = await described(await api('PATCH', created.location, { 'content-type': 'application/merge-patch+json', 'if-match': created.etag }, JSON.stringify({ done: true })));
    return { list, created, stale, updated };
  },
  async refresh() {
    const before = tokens.access_token;
    tokens = await retry(async () => oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token, { DPoP: dpop, ...options })));
    const read = await api('GET', '/api/v1/notes');
    return { tokenType: tokens.token_type, newAccessToken: tokens.access_token !== before, readStatus: read.status };
  },
  async redeemCaught(callback) {
    try {
      await this.redeem(callback);
      return { rejected: false };
    } catch (error) {
      return { rejected: true, name: error.name, message: error.message };
    }
  },
};
`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Notes SPA</title></head><body><main><h1>Notes</h1></main><script type="module">${script}</script></body></html>`;
}

/** A static web server: the app's page, the library, and a callback page that only shows it was reached. */
class StaticSite {
  private constructor(
    private readonly server: Server,
    readonly origin: string,
  ) {}

  static async start(page: (origin: string) => string): Promise<StaticSite> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    server.on('request', (request, response) => {
      const path = new URL(request.url ?? '/', origin).pathname;
      if (path === '/') response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(origin));
      else if (path === '/oauth4webapi.js') response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(OAUTH4WEBAPI);
      else if (path === '/callback') response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Signed in</title></head><body><main><h1>Signed in</h1></main></body></html>');
      else response.writeHead(404).end();
    });
    return new StaticSite(server, origin);
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** What the page's script offers the test (window.spa), run in the page by page.evaluate. */
interface Spa {
  start(): Promise<string>;
  verifier(): string;
  redeem(callback: string): Promise<{ tokenType: string; scope: string; subject: string; refreshToken: boolean }>;
  redeemCaught(callback: string): Promise<{ rejected: boolean; name?: string; message?: string }>;
  userinfo(): Promise<Record<string, unknown>>;
  notes(): Promise<Record<'list' | 'created' | 'stale' | 'updated', { status: number; etag: string | null; location: string | null; body: unknown }>>;
  refresh(): Promise<{ tokenType: string; newAccessToken: boolean; readStatus: number }>;
}
/** The page's global object (the project's TypeScript has no DOM library). */
declare const window: { spa?: Spa };

describe('a single-page app in a real browser: oauth4webapi, PKCE and DPoP across origins (issue 34)', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  let registered: StaticSite;
  let unregistered: StaticSite;
  let chromium: Chromium;
  let context: BrowserContext;
  let clientId: string;
  const user = { username: 'grace.hopper', password: 'cobol compiler 1959' };

  beforeAll(async () => {
    // The client's id goes into the page, and the page's origin into the client: the sites serve
    // what clientId holds when the page is asked for.
    const started = await Promise.allSettled([
      startAtIssuer().then((value) => ({ nest, issuer } = value)),
      StaticSite.start((origin) => appPage(issuer.href, clientId, `${origin}/callback`)).then((value) => (registered = value)),
      StaticSite.start(() => appPage(issuer.href, clientId, `${registered.origin}/callback`)).then((value) => (unregistered = value)),
      launchChromium().then((value) => (chromium = value.browser)),
    ]);
    const failure = started.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
    const { client } = await nest.get(ClientsService).create({ name: 'Notes SPA', redirectUris: [`${registered.origin}/callback`], scope: 'openid notes:read notes:write', isPublic: true });
    clientId = client.id;
    await nest.get(UsersService).create(user.username, user.password);
    context = await chromium.newContext({ locale: 'en-US' });
    context.setDefaultTimeout(10_000);
  });

  afterAll(async () => {
    await context?.close();
    await chromium?.close();
    await registered?.stop();
    await unregistered?.stop();
    await nest?.close();
    await dropTestDatabase();
  });

  /** Opens the app's page at `site` and waits for its script. */
  async function openApp(site: StaticSite): Promise<Page> {
    const page = await context.newPage();
    await page.goto(`${site.origin}/`);
    await page.waitForFunction(() => typeof window.spa === 'object');
    return page;
  }

  /** The person signs in and allows in another tab (as in a popup); the callback URL it lands on. */
  async function signIn(authorizationUrl: string): Promise<string> {
    const tab = await context.newPage();
    await tab.goto(authorizationUrl);
    if (await tab.getByLabel('Username').isVisible()) {
      await tab.getByLabel('Username').fill(user.username);
      await tab.getByLabel('Password').fill(user.password);
      await Promise.all([tab.waitForURL((url) => url.pathname === '/authorize' || url.pathname === '/callback'), tab.getByRole('button', { name: 'Sign in', exact: true }).click()]);
    }
    if (new URL(tab.url()).pathname !== '/callback') {
      await Promise.all([tab.waitForURL((url) => url.pathname === '/callback'), tab.getByRole('button', { name: 'Allow' }).click()]);
    }
    const callback = tab.url();
    await tab.close();
    return callback;
  }

  describe('served from the origin of its registered redirect URI', () => {
    let page: Page;

    beforeAll(async () => {
      page = await openApp(registered);
    });

    it('discovers the server and signs in: the code redeemed with PKCE and a DPoP proof, from the page', async () => {
      const authorizationUrl = await page.evaluate(() => window.spa!.start());
      expect(new URL(authorizationUrl).origin).toBe(issuer.origin);
      const callback = await signIn(authorizationUrl);
      expect(new URL(callback).origin).toBe(registered.origin);
      const tokens = await page.evaluate((url) => window.spa!.redeem(url), callback);
      expect({ ...tokens, scope: tokens.scope.split(' ').sort() }).toEqual({ tokenType: 'dpop', scope: ['notes:read', 'notes:write', 'openid'], subject: expect.any(String), refreshToken: true });
    });

    it('reads userinfo with the DPoP-bound token', async () => {
      await expect(page.evaluate(() => window.spa!.userinfo())).resolves.toMatchObject({ sub: expect.any(String) });
    });

    it('reads the data API, creates a note, and updates it with If-Match (a stale ETag is 412, readable by the page)', async () => {
      const { list, created, stale, updated } = await page.evaluate(() => window.spa!.notes());
      expect(list).toMatchObject({ status: 200, etag: expect.any(String), body: [] });
      expect(created).toMatchObject({ status: 201, etag: expect.any(String), location: expect.stringContaining('/api/v1/notes/'), body: { title: 'Written from the browser' } });
      expect(stale).toMatchObject({ status: 412, body: { error: expect.any(String) } });
      expect(updated).toMatchObject({ status: 200, body: { title: 'Written from the browser', done: true } });
      expect(updated.etag).not.toBe(created.etag);
    });

    it('refreshes with the same key and reads with the new token', async () => {
      await expect(page.evaluate(() => window.spa!.refresh())).resolves.toEqual({ tokenType: 'dpop', newAccessToken: true, readStatus: 200 });
    });
  });

  describe('the same page served from an origin no client registered', () => {
    it('discovery works (a public document), but the browser stops the code at /token: fetch rejects, and the code is still unused', async () => {
      const page = await openApp(unregistered);
      const authorizationUrl = await page.evaluate(() => window.spa!.start());
      const callback = await signIn(authorizationUrl);
      const outcome = await page.evaluate((url) => window.spa!.redeemCaught(url), callback);
      expect(outcome).toMatchObject({ rejected: true, name: 'TypeError', message: 'Failed to fetch' });
      // The preflight was refused, so the request itself was never sent: the code still works (for its client, from a server).
      const code = new URL(callback).searchParams.get('code')!;
      const verifier = await page.evaluate(() => window.spa!.verifier());
      const redeemed = await fetch(new URL('/token', issuer), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: `${registered.origin}/callback`, code_verifier: verifier, client_id: clientId }),
      });
      expect({ status: redeemed.status, tokenType: ((await redeemed.json()) as { token_type?: string }).token_type }).toEqual({ status: 200, tokenType: 'bearer' });
    });
  });
});
