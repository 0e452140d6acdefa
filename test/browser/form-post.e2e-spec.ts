/**
 * response_mode=form_post in a real browser (issue 37): headless Chromium signs in and allows, and
 * our page's one inline script, allowed by its hash in the page's Content-Security-Policy, posts
 * the response to the client's redirect URI (a small HTTP server of this test); with JavaScript
 * off, the person's click on the page's button does. No CSP violation, nothing but the form.
 */
import { jest } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser as Chromium, BrowserContext, Page as PlaywrightPage } from 'playwright-core';
import { appConfig } from '../../src/config/app.config.js';
import { authorizeUrl, newPkce, tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';
import { watchPage } from './support/a11y.js';
import { launchChromium } from './support/chromium.js';

jest.setTimeout(120_000);

const HOSTILE_STATE = '"><script>alert(1)</script>';

/** The client's redirect endpoint: records each POST's form body. */
class PostReceiver {
  readonly received: URLSearchParams[] = [];

  private constructor(
    private readonly server: Server,
    readonly origin: string,
  ) {}

  static async start(): Promise<PostReceiver> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const receiver = new PostReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on('request', (request, response) => {
      let body = '';
      request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      request.on('end', () => {
        if (request.method === 'POST' && request.url === '/callback') receiver.received.push(new URLSearchParams(body));
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Client</title></head><body><h1>Back at the client</h1></body></html>');
      });
    });
    return receiver;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe('response_mode=form_post in a real browser (Form Post Response Mode §2)', () => {
  let app: TestApp;
  let issuer: string;
  let receiver: PostReceiver;
  let client: RegisteredClient;
  let user: TestUser;
  let chromium: Chromium;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    const started = await Promise.allSettled([
      TestApp.start().then((value) => (app = value)),
      PostReceiver.start().then((value) => (receiver = value)),
      launchChromium().then((value) => (chromium = value.browser)),
    ]);
    const failure = started.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
    issuer = app.app.get(appConfig.KEY).issuer;
    client = await app.createClient({ name: 'Form post app', redirectUris: [`${receiver.origin}/callback`], scope: 'notes:read' });
    user = await app.createUser('grace.hopper', 'cobol compiler 1959');
  });
  afterAll(async () => {
    await Promise.allSettled(contexts.map((context) => context.close()));
    await chromium?.close();
    await receiver?.stop();
    await app?.stop();
  });

  async function window(javaScriptEnabled: boolean): Promise<PlaywrightPage> {
    const context = await chromium.newContext({ javaScriptEnabled });
    contexts.push(context);
    context.setDefaultTimeout(10_000);
    return context.newPage();
  }

  /** Signs in and allows; resolves once the browser is at the client, or at our form_post page when it stays there. */
  async function signInAndAllow(page: PlaywrightPage, person: TestUser, state: string, pkceChallenge: string): Promise<void> {
    await page.goto(app.url(authorizeUrl(client, { scope: 'notes:read', state, response_mode: 'form_post', code_challenge: pkceChallenge, code_challenge_method: 'S256' })));
    await page.getByLabel('Username').fill(person.username);
    await page.getByLabel('Password').fill(person.password);
    await Promise.all([page.waitForURL((url) => url.pathname === '/authorize'), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
    await page.getByRole('button', { name: 'Allow' }).click();
  }

  it('the page posts itself: the client receives code, state (hostile, byte for byte) and iss in the body, with no CSP violation; the code redeems', async () => {
    const page = await window(true);
    const watcher = watchPage(page, app.baseUrl);
    const pkce = newPkce();
    await signInAndAllow(page, user, HOSTILE_STATE, pkce.challenge);
    await page.waitForURL((url) => url.origin === receiver.origin);
    expect(new URL(page.url()).search).toBe('');
    const [posted] = receiver.received.splice(0);
    expect(Object.fromEntries(posted)).toEqual({ code: expect.any(String), state: HOSTILE_STATE, iss: issuer });
    expect(watcher.problems()).toEqual({ consoleErrors: [], pageErrors: [], failedRequests: [] });
    const tokens = await tokenRequest(app, client, { grant_type: 'authorization_code', code: posted.get('code')!, redirect_uri: `${receiver.origin}/callback`, code_verifier: pkce.verifier });
    expect(tokens.status).toBe(200);
  });

  it('without JavaScript the page waits with a button, and the person\'s click posts the same answer', async () => {
    const page = await window(false);
    // Another person, so that the consent page comes again.
    await signInAndAllow(page, await app.createUser('katherine.johnson', 'orbital mechanics 1962'), 'no-script', newPkce().challenge);
    await page.waitForURL((url) => url.origin === app.baseUrl && url.pathname === '/consent');
    expect(receiver.received).toHaveLength(0);
    await Promise.all([page.waitForURL((url) => url.origin === receiver.origin), page.getByRole('button', { name: 'Continue' }).click()]);
    const [posted] = receiver.received.splice(0);
    expect(Object.fromEntries(posted)).toEqual({ code: expect.any(String), state: 'no-script', iss: issuer });
  });
});
