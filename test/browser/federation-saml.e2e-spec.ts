/**
 * Sign-in through an upstream SAML 2.0 identity provider in a real browser (issue 45): headless
 * Chromium (support/chromium.ts, driven by playwright-core) follows a stock relying party's
 * authorization request (openid-client) to Latchkey's sign-in page, takes "Sign in with Contoso" to
 * Debian's SimpleSAMLphp (test/federation/support/simplesamlphp.ts), signs in on its form, and
 * lets its page post the signed response to our Assertion Consumer Service.
 *
 * What only a real browser shows: that POST is cross-site (SAML Bindings §3.5), so a browser that
 * enforces SameSite sends none of our Lax cookies with it; our ACS answers 303 to
 * /federation/<idp>/saml/complete, and that top-level GET navigation must carry the session cookie
 * again, for the pending sign-in (and its request ID, SAML Profiles §4.1.4.3) to be found. The
 * cookie-jar browser of test/e2e/federation-saml.e2e-spec.ts cannot tell; Chromium can. The IdP
 * is at localhost, another site than Latchkey's 127.0.0.1 (a site ignores the port), as a
 * company's IdP is. Then Single Logout (SAML Profiles §4.4): "Sign out" on our home page goes
 * through SimpleSAMLphp and back home, signed out there and here.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { jest } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import * as oidc from 'openid-client';
import type { Browser as Chromium, BrowserContext, Page as PlaywrightPage, Request } from 'playwright-core';
import { ClientsService } from '../../src/clients/clients.service.js';
import { PROJECT_ROOT } from '../../src/common/project-root.js';
import { sessionConfig, type SessionConfig } from '../../src/config/session.config.js';
import { IdentityProvidersService } from '../../src/identity-providers/identity-providers.service.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { makeSigningKeys, type SigningKeys } from '../federation/support/saml-fixtures.js';
import { SAML_TEST_USER, SimpleSamlPhp } from '../federation/support/simplesamlphp.js';
import { axeViolations, watchPage } from './support/a11y.js';
import { callbackServer } from './support/callback-server.js';
import { launchChromium } from './support/chromium.js';

jest.setTimeout(60_000);

const DATABASE = process.env.TEST_DATABASE_URL ? 'postgres' : 'sqlite';
const SCREENSHOTS = join(PROJECT_ROOT, 'test-results', 'screenshots');
const IDP = 'contoso';
/** Another name for this machine, so another site than Latchkey's 127.0.0.1. */
const IDP_HOST = 'localhost';

/** One top-level navigation of the window: where it went, how it was answered, and whether our session cookie went with it. */
interface Hop {
  /** `METHOD where/path`, where is latchkey, idp or rp. */
  request: string;
  status: number | undefined;
  withOurCookie: boolean;
  /** The Sec-Fetch-Site header Chromium sent (Fetch Metadata). */
  site: string | undefined;
}

describe('sign-in through an upstream SAML 2.0 provider (SimpleSAMLphp, another site) in a real browser (issue 45)', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  let idp: SimpleSamlPhp;
  let spKeys: SigningKeys;
  let callbacks: Awaited<ReturnType<typeof callbackServer>>;
  let chromium: Chromium;
  let rp: oidc.Configuration;
  let cookieName: string;
  let context: BrowserContext;
  let page: PlaywrightPage;
  let watcher: ReturnType<typeof watchPage>;
  /** The window's navigations since the last `navigations()`. */
  let recorded: Promise<Hop>[] = [];

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    spKeys = makeSigningKeys('latchkey-sp');
    // Started together, each kept as soon as it is up: if one fails (no browser), afterAll still stops the others.
    const started = await Promise.allSettled([
      startAtIssuer({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' }).then(async (value) => {
        ({ nest, issuer } = value);
        const base = `${issuer.origin}/federation/${IDP}/saml`;
        // Our SP signing certificate in its metadata: SimpleSAMLphp checks our signed LogoutRequest (validate.logout).
        idp = await SimpleSamlPhp.start({ entityId: `${base}/metadata`, acs: `${base}/acs`, slo: `${base}/slo`, signingCertificate: spKeys.cert }, { host: IDP_HOST });
      }),
      callbackServer().then((value) => (callbacks = value)),
      launchChromium().then((value) => (chromium = value.browser)),
    ]);
    const failure = started.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
    cookieName = nest.get<SessionConfig>(sessionConfig.KEY).cookieName;
    await nest.get(IdentityProvidersService).create(
      { id: IDP, displayName: 'Contoso', protocol: 'saml', settings: { metadataUrl: idp.metadataUrl, trustEmail: true, spSigningKey: { file: spKeys.keyFile }, spSigningCertificate: { file: spKeys.certFile } } },
      'test',
    );
    const { client, secret } = await nest.get(ClientsService).create({ name: 'Expense reports', redirectUris: [callbacks.redirectUri], scope: 'notes:read' });
    rp = await oidc.discovery(issuer, client.id, undefined, oidc.ClientSecretBasic(secret!), { execute: [oidc.allowInsecureRequests] });

    context = await chromium.newContext({ viewport: { width: 1024, height: 768 }, locale: 'en-US' });
    // A missing element fails in 10 s rather than Playwright's 30.
    context.setDefaultTimeout(10_000);
    page = await context.newPage();
    watcher = watchPage(page, issuer.origin);
    page.on('request', (request) => {
      if (request.isNavigationRequest() && request.frame() === page.mainFrame()) recorded.push(hopOf(request));
    });
  });

  afterAll(async () => {
    await context?.close();
    await chromium?.close();
    callbacks?.server.closeAllConnections();
    await new Promise((resolve) => callbacks?.server.close(resolve));
    await idp?.stop();
    await nest?.close();
    await dropTestDatabase();
    if (spKeys) rmSync(dirname(spKeys.keyFile), { recursive: true, force: true });
  });

  /** The headers Chromium really sent (cookies included), and the answer. */
  async function hopOf(request: Request): Promise<Hop> {
    const url = new URL(request.url());
    const where = url.origin === issuer.origin ? 'latchkey' : url.origin === idp.baseUrl ? 'idp' : url.href.startsWith(callbacks.redirectUri) ? 'rp' : url.origin;
    const headers = await request.allHeaders();
    const cookies = (headers.cookie ?? '').split(/;\s*/).map((pair) => pair.split('=')[0]);
    return { request: `${request.method()} ${where}${url.pathname}`, status: (await request.response())?.status(), withOurCookie: where === 'latchkey' && cookies.includes(cookieName), site: headers['sec-fetch-site'] };
  }

  /** The navigations recorded since the last call. */
  async function navigations(): Promise<Hop[]> {
    const hops = await Promise.all(recorded);
    recorded = [];
    return hops;
  }

  /** A hop in one line, for the chains that only need to show the way. */
  function line(hop: Hop): string {
    return `${hop.request} ${hop.status}${hop.withOurCookie ? ' (our cookie)' : ''}`;
  }

  function screenshot(name: string): Promise<Buffer> {
    return page.screenshot({ path: join(SCREENSHOTS, `${DATABASE}-federation-saml-${name}.png`), fullPage: true });
  }

  it('the relying party\'s request, "Sign in with Contoso", SimpleSAMLphp\'s form, its cross-site POST to our ACS, our GET that brings the Lax cookie back, our consent: the code redeems for our ID token with the mapped email', async () => {
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(rp, { redirect_uri: callbacks.redirectUri, scope: 'openid email profile', nonce, state, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });

    // Our sign-in page offers the SAML provider.
    expect((await page.goto(url.href))?.status()).toBe(200);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Sign in');
    await screenshot('login');
    expect(await axeViolations(page)).toEqual([]);

    // Off to SimpleSAMLphp (our AuthnRequest by HTTP-Redirect): its login form.
    await Promise.all([page.waitForURL((at) => at.origin === idp.baseUrl), page.getByRole('link', { name: 'Sign in with Contoso' }).click()]);
    await page.locator('input#username').fill(SAML_TEST_USER.username);
    await page.locator('input#password').fill(SAML_TEST_USER.password);
    // Its answer page submits its form to our ACS by script (post.js); the browser ends on our consent page.
    await Promise.all([page.waitForURL((at) => at.origin === issuer.origin && at.pathname === '/authorize'), page.locator('button#submit_button').click()]);
    const consentHeading = await page.getByRole('heading', { level: 1 }).textContent();

    const hops = await navigations();
    const acs = hops.findIndex((hop) => hop.request === `POST latchkey/federation/${IDP}/saml/acs`);
    expect(acs).toBeGreaterThan(0);
    // Chromium enforces SameSite: the IdP's cross-site POST comes without our Lax cookie…
    expect(hops[acs]).toEqual({ request: `POST latchkey/federation/${IDP}/saml/acs`, status: 303, withOurCookie: false, site: 'cross-site' });
    // …and the 303's GET, a top-level navigation, brings it back: the pending sign-in is found, and on to the authorization request.
    expect(hops.slice(acs + 1)).toEqual([
      { request: `GET latchkey/federation/${IDP}/saml/complete`, status: 303, withOurCookie: true, site: 'cross-site' },
      { request: 'GET latchkey/authorize', status: 200, withOurCookie: true, site: 'cross-site' },
    ]);
    expect(hops.slice(0, acs).map(line)).toEqual([
      'GET latchkey/authorize 200',
      // The pending sign-in (with our AuthnRequest's ID) goes into the session cookie here.
      `GET latchkey/federation/${IDP}/start 303 (our cookie)`,
      'GET idp/saml2/idp/SSOService.php 302',
      'GET idp/module.php/core/loginuserpass.php 200',
      'POST idp/module.php/core/loginuserpass.php 200',
    ]);

    // Signed in as the just-in-time account: our consent page, not "the sign-in expired".
    expect(consentHeading).toBe('Expense reports wants to access your account');
    await expect(page.locator('.lead').textContent()).resolves.toBe(`Signed in as ${SAML_TEST_USER.username}`);
    await screenshot('consent');
    expect(await axeViolations(page)).toEqual([]);

    const callback = callbacks.next();
    await Promise.all([page.waitForURL((at) => at.href.startsWith(callbacks.redirectUri)), page.getByRole('button', { name: 'Allow' }).click()]);
    const received = await callback;
    expect(received.searchParams.get('iss')).toBe(issuer.origin);
    const tokens = await oidc.authorizationCodeGrant(rp, received, { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state, idTokenExpected: true });
    expect(tokens.claims()).toMatchObject({ iss: issuer.origin, email: SAML_TEST_USER.mail, email_verified: true, name: SAML_TEST_USER.displayName });
    await navigations();
  });

  it('"Sign out" on our account page goes through SimpleSAMLphp\'s Single Logout (our signed LogoutRequest, its LogoutResponse) and back home, signed out there too', async () => {
    await page.goto(new URL('/account', issuer).href);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Your account');
    // The POST's redirects lead through SimpleSAMLphp and back, never stopping there: CSP form-action must list its origin, or Chromium stops at that hop.
    await Promise.all([page.waitForResponse((response) => response.url().startsWith(`${issuer.origin}/federation/${IDP}/saml/slo`)), page.getByRole('button', { name: 'Sign out', exact: true }).click()]);
    await page.waitForURL((at) => at.origin === issuer.origin && at.pathname === '/');
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Latchkey');
    expect((await navigations()).map(line)).toEqual([
      'GET latchkey/account 200 (our cookie)',
      'POST latchkey/logout 303 (our cookie)',
      // SimpleSAMLphp checks our LogoutRequest's signature (our certificate is in its metadata), ends its session, answers by HTTP-Redirect.
      'GET idp/saml2/idp/SingleLogoutService.php 302',
      'GET idp/module.php/core/idp/resumelogout.php 302',
      // A top-level GET again: our cookie says where the sign-out was going (never the IdP's RelayState).
      `GET latchkey/federation/${IDP}/saml/slo 303 (our cookie)`,
      'GET latchkey/ 200 (our cookie)',
    ]);

    // Its session is gone too: a new sign-in there asks for the password again.
    await page.goto(new URL('/login', issuer).href);
    await Promise.all([page.waitForURL((at) => at.origin === idp.baseUrl), page.getByRole('link', { name: 'Sign in with Contoso' }).click()]);
    await expect(page.locator('input#password').isVisible()).resolves.toBe(true);
    expect(watcher.problems()).toEqual({ consoleErrors: [], pageErrors: [], failedRequests: [] });
  });
});
