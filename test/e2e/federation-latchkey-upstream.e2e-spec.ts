/**
 * Issue 45: a second Latchkey instance as the upstream identity provider of the first. The
 * upstream is a real server started as `npm start` starts it, on a SQLite database of its own,
 * administered with its own CLI (a person, and a confidential client for the first Latchkey). A
 * stock relying party (openid-client) signs in to the first Latchkey, whose sign-in page sends the
 * person to the upstream's own sign-in and consent pages; the person gets an account here just in
 * time, the upstream's second factor counts here (the provider is trusted for its level), and
 * signing out here signs them out there (RP-Initiated Logout with id_token_hint, no question
 * asked) while signing out there ends the session here (Back-Channel Logout).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import * as oidc from 'openid-client';
import type { DataSource } from 'typeorm';
import { ClientsService } from '../../src/clients/clients.service.js';
import { IdentityProvidersService } from '../../src/identity-providers/identity-providers.service.js';
import { UpstreamAccounts } from '../../src/identity-providers/upstream-accounts.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { Browser, hiddenFields, isConsentPage } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { startAsNpmStart, stopServer } from '../helpers/npm-start.js';
import { enrolFrom, signInWithPassword } from '../helpers/second-factor.js';
import { createTestDatabase, dropTestDatabase } from '../helpers/test-database.js';
import { totpCode } from '../helpers/totp.js';
import { FederatedBrowser, type Hop } from '../federation/support/federated-browser.js';

const RP_REDIRECT_URI = 'http://127.0.0.1:9/callback';
const RP_SIGNED_OUT = 'http://127.0.0.1:9/signed-out';
const MFA = 'urn:latchkey:acr:mfa';
/** The person, known only to the upstream Latchkey. */
const NADIA = { username: 'nadia', password: 'correct horse battery staple', email: 'nadia@staff.example' };

describe('a second Latchkey instance as the upstream identity provider of the first', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  let db: DataSource;
  let upstream: { server: ChildProcess; issuer: URL } | undefined;
  let rp: oidc.Configuration;
  let payroll: oidc.Configuration;
  /** The first sign-in's browser and our ID token: the sign-out test ends that session. */
  let signedIn: { browser: FederatedBrowser; idToken: string } | undefined;
  /** The browser of the sign-in with a second factor: the back-channel test ends that session upstream. */
  let signedInWithMfa: FederatedBrowser | undefined;
  const upstreamDatabase = join(tmpdir(), `latchkey-upstream-${process.pid}-${randomBytes(4).toString('hex')}.sqlite`);
  // Its own database whatever the suite's: a SQLite file, no schema of the test's PostgreSQL.
  const upstreamEnv = { DATABASE_URL: `sqlite:${upstreamDatabase}` };

  const liveSessions = async (username: string): Promise<number> =>
    Number((await db.query(`SELECT COUNT(*) AS n FROM "sessions" s JOIN "users" u ON u."id" = s."user_id" WHERE u."username" = '${username}' AND s."ended_at" IS NULL`))[0].n);

  /** The upstream's CLI, on the upstream's database and issuer; its JSON answer. */
  async function upstreamCli(args: string[]): Promise<Record<string, unknown>> {
    const result = await runCli(args, { env: { ...upstreamEnv, ISSUER: upstream!.issuer.origin } });
    if (result.code !== 0) throw new Error(`${args[0]} answered ${result.code}:\n${result.stderr}`);
    return JSON.parse(result.stdout) as Record<string, unknown>;
  }

  beforeAll(async () => {
    // The test's own database first, so that the two start-ups below do not both create it at once.
    await createTestDatabase();
    // Started together, each kept as soon as it is up: if one fails, afterAll still stops the other.
    const started = await Promise.allSettled([
      startAtIssuer({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' }).then((value) => ({ nest, issuer } = value)),
      startAsNpmStart({ ...upstreamEnv, DATABASE_SCHEMA: undefined, MIGRATIONS_RUN: undefined }).then(async (value) => {
        upstream = value;
        await upstreamCli(['users:create', '--username', NADIA.username, '--password', NADIA.password, '--email', NADIA.email, '--email-verified', '--name', 'Nadia Costa', '--given-name', 'Nadia', '--family-name', 'Costa']);
      }),
    ]);
    const failure = started.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
    db = nest.get<DataSource>(getDataSourceToken());
    const client = await upstreamCli([
      'clients:create',
      '--name',
      'Latchkey (first)',
      '--redirect-uri',
      `${issuer.origin}/federation/staff/callback`,
      '--post-logout-redirect-uri',
      `${issuer.origin}/federation/staff/signed-out`,
      '--backchannel-logout-uri',
      `${issuer.origin}/federation/staff/backchannel-logout`,
    ]);
    // The secret by reference (an environment variable of the first Latchkey), never in its database.
    process.env.STAFF_CLIENT_SECRET = client.client_secret as string;
    await nest.get(IdentityProvidersService).create(
      {
        id: 'staff',
        displayName: 'Staff',
        protocol: 'oidc',
        settings: {
          issuer: upstream!.issuer.origin,
          clientId: client.client_id as string,
          clientAuth: { method: 'client_secret_basic', secret: { env: 'STAFF_CLIENT_SECRET' } },
          trustEmail: true,
          trustAuthenticationLevel: true,
        },
      },
      'test',
    );
    const clients = nest.get(ClientsService);
    const relyingParty = await clients.create({ name: 'Expense reports', redirectUris: [RP_REDIRECT_URI], scope: 'notes:read', openId: { post_logout_redirect_uris: [RP_SIGNED_OUT] } });
    rp = await oidc.discovery(issuer, relyingParty.client.id, undefined, oidc.ClientSecretBasic(relyingParty.secret!), { execute: [oidc.allowInsecureRequests] });
    const strict = await clients.create({ name: 'Payroll', redirectUris: [RP_REDIRECT_URI], scope: 'notes:read', openId: { minimum_acr: MFA } });
    payroll = await oidc.discovery(issuer, strict.client.id, undefined, oidc.ClientSecretBasic(strict.secret!), { execute: [oidc.allowInsecureRequests] });
  });

  afterAll(async () => {
    delete process.env.STAFF_CLIENT_SECRET;
    await stopServer(upstream?.server);
    await nest?.close();
    await Promise.all([upstreamDatabase, `${upstreamDatabase}-wal`, `${upstreamDatabase}-shm`].map((path) => rm(path, { force: true })));
    await dropTestDatabase();
  });

  /** An authorization request of a relying party (Expense reports unless another), and how it redeems what comes back. */
  async function authorization(config: oidc.Configuration = rp) {
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: RP_REDIRECT_URI,
      scope: 'openid email profile',
      nonce,
      state,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    return { url, redeem: (callback: URL) => oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state, idTokenExpected: true }) };
  }

  /** From our sign-in page, the "Sign in with Staff" link, to the upstream Latchkey's own sign-in page. */
  async function chooseStaff(browser: FederatedBrowser, loginPage: Hop): Promise<Hop> {
    expect(loginPage.page.status).toBe(200);
    const link = /<a class="button secondary" id="upstream-staff" href="([^"]+)">Sign in with Staff<\/a>/.exec(loginPage.page.body);
    if (!link) throw new Error(`no Staff button on ${loginPage.url.href}:\n${loginPage.page.body}`);
    const form = await browser.follow(await browser.get(new URL(link[1].replace(/&amp;/g, '&'), issuer)));
    expect(form.url.origin).toBe(upstream!.issuer.origin);
    expect(form.page.body).toContain('action="/login"');
    return form;
  }

  /** At the upstream Latchkey: its password form, its one-time code page when `code` is given, its consent page when shown; follows back to us. */
  async function signInUpstream(browser: FederatedBrowser, form: Hop, code?: () => string): Promise<Hop> {
    const at = upstream!.issuer;
    const site = browser.site(at);
    let hop = await browser.follow({ url: new URL('/login', at), page: await site.submit(form.page, '/login', { username: NADIA.username, password: NADIA.password }) }, RP_REDIRECT_URI);
    if (code) {
      expect(hop.url.href).toBe(new URL('/login/code', at).href);
      hop = await browser.follow({ url: new URL('/login/code', at), page: await site.submit(hop.page, '/login/code', { code: code() }) }, RP_REDIRECT_URI);
    }
    if (hop.url.origin === at.origin && isConsentPage(hop.page)) {
      expect(hop.page.body).toContain('Latchkey (first)');
      hop = await browser.follow({ url: new URL('/consent', at), page: await site.submit(hop.page, '/consent', { decision: 'allow' }) }, RP_REDIRECT_URI);
    }
    return hop;
  }

  /** Our consent page answered (when shown): the hop to the relying party's redirect URI. */
  async function allowHere(browser: FederatedBrowser, hop: Hop): Promise<Hop> {
    if (!isConsentPage(hop.page)) return hop;
    expect(hop.url.origin).toBe(issuer.origin);
    const answer = await browser.site(issuer).submit(hop.page, '/consent', { decision: 'allow' });
    return browser.follow({ url: new URL('/consent', issuer), page: answer }, RP_REDIRECT_URI);
  }

  it('a person known only upstream signs in through the upstream Latchkey\'s own pages; the relying party gets our ID token with the mapped claims, and the account exists just in time', async () => {
    expect(await nest.get(UsersService).findByUsername(NADIA.username)).toBeNull();
    const browser = new FederatedBrowser();
    const request = await authorization();
    const consent = await signInUpstream(browser, await chooseStaff(browser, await browser.get(request.url)));
    expect(consent.url.origin).toBe(issuer.origin);
    expect(consent.page.body).toContain('Signed in as <strong>nadia</strong>');
    const back = await allowHere(browser, consent);
    expect(back.url.href.startsWith(RP_REDIRECT_URI)).toBe(true);

    const tokens = await request.redeem(back.url);
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ iss: issuer.origin, email: NADIA.email, email_verified: true, name: 'Nadia Costa', given_name: 'Nadia', family_name: 'Costa', preferred_username: 'nadia', amr: ['fed', 'pwd'], acr: 'urn:latchkey:acr:pwd' });
    const person = await nest.get(UsersService).findById(claims.sub);
    expect(person).toMatchObject({ username: 'nadia', passwordHash: '', email: NADIA.email, emailVerified: true });
    const [link] = await nest.get(UpstreamAccounts).linksOf(claims.sub);
    expect(link).toMatchObject({ idp: 'staff', origin: 'created' });
    // The stable subject is the upstream's sub (its id for nadia), not her name or address.
    expect(link.subject).toMatch(/^[0-9a-f-]{36}$/);
    expect(await liveSessions('nadia')).toBe(1);
    signedIn = { browser, idToken: tokens.id_token! };
  });

  it('with a one-time code enrolled upstream, a client requiring urn:latchkey:acr:mfa is satisfied by the upstream\'s mfa (a provider trusted for its level), with no second factor here', async () => {
    // Nadia enrols one-time codes at the upstream, on its own account page.
    const phone = new Browser(upstream!.issuer.origin);
    await signInWithPassword(phone, NADIA);
    const { key } = await enrolFrom(phone, await phone.get('/account/one-time-codes'), Date.now());

    const browser = new FederatedBrowser();
    const request = await authorization(payroll);
    // RFC 6238 §5.2: the enrolment's step is used up; the next step's code is within the upstream's one step of skew.
    const consent = await signInUpstream(browser, await chooseStaff(browser, await browser.get(request.url)), () => totpCode(key, Date.now() + 30_000));
    // No second factor asked here (Nadia has none here): from the upstream to our consent page.
    expect(consent.url.origin).toBe(issuer.origin);
    expect(consent.page.body).toContain('action="/consent"');
    expect(browser.hops.filter((hop) => hop.url.origin === issuer.origin && ['/login/code', '/account/one-time-codes'].includes(hop.url.pathname))).toEqual([]);
    const back = await allowHere(browser, consent);
    expect(back.url.href.startsWith(RP_REDIRECT_URI)).toBe(true);
    const claims = (await request.redeem(back.url)).claims()!;
    expect(claims).toMatchObject({ acr: MFA, amr: ['fed', 'pwd', 'otp', 'mfa'] });
    expect(await nest.get(UsersService).findById(claims.sub)).toMatchObject({ username: 'nadia' });
    signedInWithMfa = browser;
  });

  it('signing out here (the relying party\'s RP-initiated logout) signs the person out at the upstream Latchkey without a question, and comes back to the relying party', async () => {
    const { browser, idToken } = signedIn!;
    const upstreamHome = new URL('/account', upstream!.issuer);
    expect((await browser.get(upstreamHome)).page.body).toContain('You are signed in');
    const sessionsBefore = await liveSessions('nadia');

    const end = oidc.buildEndSessionUrl(rp, { id_token_hint: idToken, post_logout_redirect_uri: RP_SIGNED_OUT, state: 'rp-state' });
    const back = await browser.follow(await browser.get(end), RP_SIGNED_OUT);
    expect(back.url.href).toBe(`${RP_SIGNED_OUT}?state=rp-state`);
    // Every hop a redirect: our id_token_hint proved the relying party here, the upstream's ID token proved us there.
    expect(browser.hops.slice(-3).map((hop) => [hop.url.origin, hop.url.pathname, hop.page.status])).toEqual([
      [issuer.origin, '/session/end', 303],
      [upstream!.issuer.origin, '/session/end', 303],
      [issuer.origin, '/federation/staff/signed-out', 303],
    ]);
    const toUpstream = browser.hops.at(-2)!.url;
    expect(toUpstream.searchParams.get('post_logout_redirect_uri')).toBe(`${issuer.origin}/federation/staff/signed-out`);
    expect(toUpstream.searchParams.get('id_token_hint')).toMatch(/^ey/);

    expect(await liveSessions('nadia')).toBe(sessionsBefore - 1);
    expect((await browser.get(upstreamHome)).page.body).not.toContain('You are signed in');
    // A new sign-in through Staff meets the upstream's password form again.
    await chooseStaff(browser, await browser.get((await authorization()).url));
  });

  it('signing out at the upstream Latchkey ends the session it started here (its back-channel logout)', async () => {
    const browser = signedInWithMfa!;
    expect(await liveSessions('nadia')).toBe(1);
    const home = await browser.get(new URL('/account', upstream!.issuer));
    expect(home.page.body).toContain('You are signed in');
    await browser.post(new URL('/logout', upstream!.issuer), hiddenFields(home.page.body, '/logout'));
    for (let i = 0; i < 50 && (await liveSessions('nadia')) > 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await liveSessions('nadia')).toBe(0);
    expect((await browser.get(new URL('/account', issuer))).page.body).not.toContain('You are signed in');
  });
});
