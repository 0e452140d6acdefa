/**
 * Issue 45: sign-in through the company's OpenID Connect provider. node-oidc-provider (a certified
 * OP, in its own process) is the company's provider; a stock relying party (openid-client) signs in
 * through Latchkey, whose sign-in page sends the person upstream; the person gets an account here
 * just in time, with the mapped profile, and the relying party gets our ID token.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import { exportJWK, generateKeyPair } from 'jose';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as oidc from 'openid-client';
import type { DataSource } from 'typeorm';
import { ClientsService } from '../../src/clients/clients.service.js';
import { IdentityProvidersService } from '../../src/identity-providers/identity-providers.service.js';
import { UpstreamAccounts } from '../../src/identity-providers/upstream-accounts.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { MetricsService } from '../../src/metrics/metrics.service.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { FederatedBrowser, type Hop } from '../federation/support/federated-browser.js';
import { UpstreamOpenIdProvider } from '../federation/support/upstream-openid-provider.js';
import { RogueOpenIdProvider, type Forgery } from '../federation/support/rogue-openid-provider.js';

const RP_REDIRECT_URI = 'http://127.0.0.1:9/callback';
const UPSTREAM_SECRET = 'contoso-secret-for-latchkey-0123456789';

describe('sign-in through an upstream OpenID Connect provider', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  let contoso: UpstreamOpenIdProvider;
  let rp: oidc.Configuration;
  let db: DataSource;
  let rogue: RogueOpenIdProvider;
  let strictClient: { id: string; secret: string };
  let keyDirectory: string;

  const counts = async () => ({
    users: Number((await db.query('SELECT COUNT(*) AS n FROM "users"'))[0].n),
    links: Number((await db.query('SELECT COUNT(*) AS n FROM "upstream_links"'))[0].n),
    sessions: Number((await db.query('SELECT COUNT(*) AS n FROM "sessions"'))[0].n),
  });

  beforeAll(async () => {
    ({ nest, issuer } = await startAtIssuer({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', CONTOSO_SECRET: UPSTREAM_SECRET }));
    // private_key_jwt (RFC 7523) at the upstream: our key in a file, its public half registered there; another key in another file.
    const ours = await generateKeyPair('ES256', { extractable: true });
    const stranger = await generateKeyPair('ES256', { extractable: true });
    keyDirectory = mkdtempSync(join(tmpdir(), 'latchkey-upstream-key-'));
    writeFileSync(join(keyDirectory, 'ours.jwk'), JSON.stringify({ ...(await exportJWK(ours.privateKey)), kid: 'latchkey-1', alg: 'ES256' }));
    writeFileSync(join(keyDirectory, 'stranger.jwk'), JSON.stringify({ ...(await exportJWK(stranger.privateKey)), kid: 'latchkey-1', alg: 'ES256' }));
    const publicJwk = { ...(await exportJWK(ours.publicKey)), kid: 'latchkey-1', alg: 'ES256', use: 'sig' };
    db = nest.get<DataSource>(getDataSourceToken());
    contoso = await UpstreamOpenIdProvider.start(
      {
        ana: { email: 'ana@contoso.example', email_verified: true, name: 'Ana Silva', given_name: 'Ana', family_name: 'Silva', preferred_username: 'ana' },
        // Both name the address of a local person, alice: one unverified, one verified upstream.
        mallory: { email: 'alice@example.com', email_verified: false, preferred_username: 'alice' },
        eve: { email: 'alice@example.com', email_verified: true, preferred_username: 'alice' },
        bruno: { email: 'bruno@contoso.example', email_verified: true, preferred_username: 'bruno' },
        carla: { email: 'carla@contoso.example', email_verified: true, preferred_username: 'carla' },
        dana: { email: 'dana@contoso.example', email_verified: true, preferred_username: 'dana' },
        erin: { email: 'erin@contoso.example', email_verified: true, preferred_username: 'erin' },
      },
      [
        { client_id: 'latchkey', client_secret: UPSTREAM_SECRET, redirect_uris: [`${issuer.origin}/federation/contoso/callback`], token_endpoint_auth_method: 'client_secret_basic' },
        { client_id: 'latchkey-keys', redirect_uris: [`${issuer.origin}/federation/contoso-keys/callback`, `${issuer.origin}/federation/contoso-stranger/callback`], token_endpoint_auth_method: 'private_key_jwt', token_endpoint_auth_signing_alg: 'ES256', jwks: { keys: [publicJwk] } },
      ],
    );
    await nest.get(IdentityProvidersService).create(
      { id: 'contoso', displayName: 'Contoso', protocol: 'oidc', settings: { issuer: contoso.issuer, clientId: 'latchkey', clientAuth: { method: 'client_secret_basic', secret: { env: 'CONTOSO_SECRET' } }, domains: ['contoso.example'], trustEmail: true } },
      'test',
    );
    const { client, secret } = await nest.get(ClientsService).create({ name: 'Expense reports', redirectUris: [RP_REDIRECT_URI], scope: 'notes:read' });
    rp = await oidc.discovery(issuer, client.id, undefined, oidc.ClientSecretBasic(secret!), { execute: [oidc.allowInsecureRequests] });
    const strict = await nest.get(ClientsService).create({ name: 'Payroll', redirectUris: [RP_REDIRECT_URI], scope: 'notes:read', openId: { minimum_acr: 'urn:latchkey:acr:mfa' } });
    strictClient = { id: strict.client.id, secret: strict.secret! };
    rogue = await RogueOpenIdProvider.start('latchkey-at-rogue');
    await nest.get(IdentityProvidersService).create({ id: 'rogue', displayName: 'Rogue', protocol: 'oidc', settings: { issuer: rogue.issuer, clientId: 'latchkey-at-rogue', clientAuth: { method: 'none' }, userinfo: false } }, 'test');
    await nest.get(UsersService).create('alice', 'correct horse battery staple', { email: 'alice@example.com', emailVerified: true });
  });

  afterAll(async () => {
    await rogue?.stop();
    await contoso?.stop();
    if (keyDirectory) rmSync(keyDirectory, { recursive: true, force: true });
    await nest?.close();
    await dropTestDatabase();
  });

  /** An authorization request of the relying party, and how to redeem what comes back. */
  async function authorization(params: Record<string, string> = {}) {
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(rp, { redirect_uri: RP_REDIRECT_URI, scope: 'openid email profile', nonce, state, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', ...params });
    return { url, redeem: (callback: URL) => oidc.authorizationCodeGrant(rp, callback, { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state, idTokenExpected: true }) };
  }

  /** Our consent page answered: the hop to the relying party's redirect URI. */
  async function allow(browser: FederatedBrowser, consent: Hop): Promise<Hop> {
    const answer = await browser.site(issuer).submit(consent.page, '/consent', { decision: 'allow' });
    return browser.follow({ url: new URL('/consent', issuer), page: answer }, RP_REDIRECT_URI);
  }

  /** From our sign-in page, the "Sign in with Contoso" link, to the upstream's form. */
  async function chooseContoso(browser: FederatedBrowser, loginPage: Hop): Promise<Hop> {
    const link = /<a class="button secondary" id="upstream-contoso" href="([^"]+)">Sign in with Contoso<\/a>/.exec(loginPage.page.body);
    if (!link) throw new Error(`no Contoso button on ${loginPage.url.href}:\n${loginPage.page.body}`);
    return browser.follow(await browser.get(new URL(link[1].replace(/&amp;/g, '&'), issuer)));
  }

  it('a person with no account here signs in to a stock relying party through Contoso, gets an account just in time, and the relying party our ID token with the mapped claims', async () => {
    const before = await counts();
    const browser = new FederatedBrowser();
    const request = await authorization();
    const loginPage = await browser.get(request.url);
    expect(loginPage.page.status).toBe(200);
    const upstreamForm = await chooseContoso(browser, loginPage);
    expect(upstreamForm.url.origin).toBe(contoso.issuer);
    const consent = await browser.signInUpstream(upstreamForm, 'ana');
    expect(consent.url.origin).toBe(issuer.origin);
    expect(consent.page.body).toContain('Signed in as <strong>ana</strong>');
    const back = await allow(browser, consent);
    expect(back.url.href.startsWith(RP_REDIRECT_URI)).toBe(true);

    const tokens = await request.redeem(back.url);
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ iss: issuer.origin, email: 'ana@contoso.example', email_verified: true, name: 'Ana Silva', given_name: 'Ana', family_name: 'Silva', amr: ['fed'], acr: 'urn:latchkey:acr:pwd' });
    const person = await nest.get(UsersService).findById(claims.sub);
    expect(person).toMatchObject({ username: 'ana', passwordHash: '' });
    expect(await nest.get(UpstreamAccounts).linksOf(claims.sub)).toEqual([expect.objectContaining({ idp: 'contoso', subject: 'ana', origin: 'created' })]);
    expect(await counts()).toEqual({ users: before.users + 1, links: before.links + 1, sessions: before.sessions + 1 });
    // Counted per provider, and audited.
    const metrics = await nest.get(MetricsService).registry.metrics();
    expect(metrics).toContain('latchkey_upstream_sign_ins_started_total{idp="contoso"} 1');
    expect(metrics).toContain('latchkey_upstream_sign_ins_total{idp="contoso",account="created"} 1');
    const audited = (await db.query(`SELECT "actor", "subject" FROM "audit_events" WHERE "action" = 'user.created_from_upstream'`)) as { actor: string; subject: string }[];
    expect(audited).toEqual([{ actor: 'idp:contoso', subject: `user:${claims.sub}` }]);
  });

  /** Through our sign-in page and Contoso as `login`, to our consent page (or wherever the sign-in lands). */
  async function signInThroughContoso(browser: FederatedBrowser, url: URL, login: string, amr?: string): Promise<Hop> {
    return browser.signInUpstream(await chooseContoso(browser, await browser.get(url)), login, { amr, stopAt: RP_REDIRECT_URI });
  }

  it('signs the same person in again without a second account; users:show lists the link with its last sign-in', async () => {
    const browser = new FederatedBrowser();
    const request = await authorization();
    const landed = await signInThroughContoso(browser, request.url, 'ana');
    // Ana allowed the relying party before: no consent page this time.
    expect(landed.url.href.startsWith(RP_REDIRECT_URI)).toBe(true);
    const claims = (await request.redeem(landed.url)).claims()!;
    const ana = await nest.get(UsersService).findByUsername('ana');
    expect(claims.sub).toBe(ana!.id);
    expect(await nest.get(UpstreamAccounts).linksOf(ana!.id)).toEqual([expect.objectContaining({ idp: 'contoso', subject: 'ana', last_sign_in_at: expect.any(String) })]);
  });

  it('never links by email: upstream people naming a local person\'s address, verified or not, get accounts of their own', async () => {
    const alice = await nest.get(UsersService).findByUsername('alice');
    for (const login of ['mallory', 'eve']) {
      const browser = new FederatedBrowser();
      const request = await authorization();
      const consent = await signInThroughContoso(browser, request.url, login);
      const claims = (await request.redeem((await allow(browser, consent)).url)).claims()!;
      expect(claims.sub).not.toBe(alice!.id);
      const person = await nest.get(UsersService).findById(claims.sub);
      // alice is taken: the new person gets another name, and the address only as verified as Contoso says.
      expect(person!.username).toMatch(/^alice@example\.com$|^alice-[0-9a-f]{8}$/);
      expect(person!.emailVerified).toBe(login === 'eve');
    }
    expect(await nest.get(UpstreamAccounts).linksOf(alice!.id)).toEqual([]);
  });

  describe('what the request here asks of the upstream', () => {
    it('idp_hint skips our sign-in page; login_hint goes upstream', async () => {
      const browser = new FederatedBrowser();
      const request = await authorization({ idp_hint: 'contoso', login_hint: 'bruno@contoso.example' });
      const hop = await browser.get(request.url);
      expect(hop.page.status).toBe(302);
      const upstream = await browser.follow(hop);
      expect(upstream.url.origin).toBe(contoso.issuer);
      const sent = browser.hops.find((h) => h.url.origin === contoso.issuer && h.url.pathname === '/auth')!;
      expect(sent.url.searchParams.get('login_hint')).toBe('bruno@contoso.example');
      expect(sent.url.searchParams.get('prompt')).toBeNull();
    });

    it('an idp_hint naming no provider shows the sign-in page', async () => {
      const browser = new FederatedBrowser();
      const hop = await browser.get((await authorization({ idp_hint: 'nobody' })).url);
      expect(hop.page.status).toBe(200);
      expect(hop.page.body).toContain('action="/login"');
    });

    it('home-realm discovery: a work address with no password goes to Contoso, with it as login_hint', async () => {
      const browser = new FederatedBrowser();
      const page = await browser.get((await authorization()).url);
      expect(page.page.body).toContain('With a work address at contoso.example, leave the password empty');
      const answer = await browser.site(issuer).submit(page.page, '/login', { username: 'carla@contoso.example', password: '' });
      expect(answer.status).toBe(303);
      expect(answer.location).toMatch(/^\/federation\/contoso\/start\?return_to=%2Fauthorize%3F.*&login_hint=carla%40contoso.example$/);
    });

    it('prompt=login and max_age ask the upstream for a new sign-in too', async () => {
      const browser = new FederatedBrowser();
      await browser.get((await authorization({ prompt: 'login', max_age: '60', idp_hint: 'contoso' })).url).then((hop) => browser.follow(hop));
      const sent = browser.hops.find((h) => h.url.origin === contoso.issuer && h.url.pathname === '/auth')!;
      expect(sent.url.searchParams.get('prompt')).toBe('login');
      expect(sent.url.searchParams.get('max_age')).toBe('60');
    });
  });

  describe('levels', () => {
    async function strictRequest() {
      const verifier = oidc.randomPKCECodeVerifier();
      const url = oidc.buildAuthorizationUrl(rp, { client_id: strictClient.id, redirect_uri: RP_REDIRECT_URI, scope: 'openid', nonce: 'n', state: 's', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
      return url;
    }

    it('an untrusted upstream\'s mfa counts for nothing here: a client that requires a second factor still asks for one locally', async () => {
      const browser = new FederatedBrowser();
      const landed = await browser.follow(await signInThroughContoso(browser, await strictRequest(), 'bruno', 'pwd,mfa'));
      expect(landed.url.pathname).toBe('/account/one-time-codes');
    });

    it('a provider trusted for its level: its mfa meets the client\'s floor', async () => {
      await nest.get(IdentityProvidersService).update('contoso', { settings: { trustAuthenticationLevel: true } }, 'test');
      try {
        const browser = new FederatedBrowser();
        const landed = await signInThroughContoso(browser, await strictRequest(), 'dana', 'pwd,mfa');
        expect(landed.page.body).toContain('Signed in as <strong>dana</strong>');
        expect(landed.page.body).toContain('action="/consent"');
        // The same provider's password-only sign-in does not.
        const other = new FederatedBrowser();
        const asked = await other.follow(await signInThroughContoso(other, await strictRequest(), 'carla', 'pwd'));
        expect(asked.url.pathname).toBe('/account/one-time-codes');
      } finally {
        await nest.get(IdentityProvidersService).update('contoso', { settings: { trustAuthenticationLevel: false } }, 'test');
      }
    });
  });

  describe('attacks', () => {
    /** Starts a sign-in at the rogue provider; what our redirect to it carried. */
    async function startAtRogue(browser: FederatedBrowser): Promise<{ state: string; nonce: string }> {
      const hop = await browser.get(new URL('/federation/rogue/start', issuer));
      expect(hop.page.status).toBe(303);
      const to = new URL(hop.page.location!);
      expect(to.origin).toBe(rogue.issuer);
      expect(to.searchParams.get('code_challenge_method')).toBe('S256');
      return { state: to.searchParams.get('state')!, nonce: to.searchParams.get('nonce')! };
    }

    const callback = (idp: string, params: Record<string, string>) => new URL(`/federation/${idp}/callback?${new URLSearchParams(params)}`, issuer);

    it.each<Forgery>(['unpublished-key', 'other-audience', 'other-nonce', 'expired', 'other-issuer', 'no-signature'])('an ID token forged with %s is refused, and nothing is written', async (forgery) => {
      const before = await counts();
      const browser = new FederatedBrowser();
      const { state, nonce } = await startAtRogue(browser);
      Object.assign(rogue, { nonce, forgery, subject: `forged-${forgery}` });
      const answer = await browser.get(callback('rogue', { code: 'c', state, iss: rogue.issuer }));
      expect(answer.page.status).toBe(400);
      expect(answer.page.body).toContain('The answer from Rogue could not be verified, so nobody was signed in.');
      expect(await counts()).toEqual(before);
    });

    it('the same answer, honest, signs in (the forgeries are refused for what they forge); replayed, it is refused', async () => {
      const browser = new FederatedBrowser();
      const { state, nonce } = await startAtRogue(browser);
      Object.assign(rogue, { nonce, forgery: 'honest', subject: 'honest-rogue-person' });
      const url = callback('rogue', { code: 'c', state, iss: rogue.issuer });
      const answer = await browser.get(url);
      expect(answer.page.status).toBe(303);
      expect(answer.page.location).toBe('/');
      const before = await counts();
      const replayed = await browser.get(url);
      expect(replayed.page.status).toBe(400);
      expect(replayed.page.body).toContain('has expired or was already used');
      // In another browser (an attacker who saw the URL), too.
      expect((await new FederatedBrowser().get(url)).page.status).toBe(400);
      expect(await counts()).toEqual(before);
    });

    it('mix-up (RFC 9700 §4.4): an answer naming another issuer is refused before its code is sent anywhere (RFC 9207)', async () => {
      const before = await counts();
      const browser = new FederatedBrowser();
      const { state } = await startAtRogue(browser);
      const tokenRequests = rogue.tokenRequests;
      const answer = await browser.get(callback('rogue', { code: 'code-from-contoso', state, iss: contoso.issuer }));
      expect(answer.page.status).toBe(400);
      expect(rogue.tokenRequests).toBe(tokenRequests);
      expect(await counts()).toEqual(before);
    });

    it('mix-up: an answer at the callback of a provider this browser was not sent to is refused', async () => {
      const before = await counts();
      const browser = new FederatedBrowser();
      const { state } = await startAtRogue(browser);
      const answer = await browser.get(callback('contoso', { code: 'c', state, iss: contoso.issuer }));
      expect(answer.page.status).toBe(400);
      expect(answer.page.body).toContain('has expired or was already used');
      expect(await counts()).toEqual(before);
    });

    it('a state that is not this browser\'s is refused (login CSRF, RFC 9700 §4.7)', async () => {
      const before = await counts();
      const browser = new FederatedBrowser();
      await startAtRogue(browser);
      const answer = await browser.get(callback('rogue', { code: 'c', state: 'the-attackers-state', iss: rogue.issuer }));
      expect(answer.page.status).toBe(400);
      expect(await counts()).toEqual(before);
    });
  });

  describe('when it fails', () => {
    it('an upstream that cannot be reached: a 502 page naming it, never a 500, and a way back to the sign-in page', async () => {
      await nest.get(IdentityProvidersService).create({ id: 'gone', displayName: 'Gone Inc', protocol: 'oidc', settings: { issuer: 'http://127.0.0.1:9', clientId: 'x' } }, 'test');
      const hop = await new FederatedBrowser().get(new URL('/federation/gone/start', issuer));
      expect(hop.page.status).toBe(502);
      expect(hop.page.body).toContain('Gone Inc could not be reached');
      expect(hop.page.body).toContain('href="/login"');
      await nest.get(IdentityProvidersService).delete('gone', 'test');
    });

    it('a provider that creates no accounts: a person nobody linked is refused, with a page saying so', async () => {
      await nest.get(IdentityProvidersService).update('contoso', { settings: { createAccounts: false } }, 'test');
      try {
        const before = await counts();
        const browser = new FederatedBrowser();
        const landed = await signInThroughContoso(browser, (await authorization()).url, 'erin');
        expect(landed.page.status).toBe(403);
        expect(landed.page.body).toContain('you have no account here yet');
        expect(await counts()).toEqual(before);
      } finally {
        await nest.get(IdentityProvidersService).update('contoso', { settings: { createAccounts: true } }, 'test');
      }
    });

    it('an unknown or disabled provider: 404, not a trip upstream', async () => {
      expect((await new FederatedBrowser().get(new URL('/federation/nobody/start', issuer))).page.status).toBe(404);
      expect((await new FederatedBrowser().get(new URL('/federation/NOT..valid/callback', issuer))).page.status).toBe(404);
    });
  });

  it('a key rotation upstream: the next sign-in is checked against the new key at once', async () => {
    await contoso.rotateKeys();
    const browser = new FederatedBrowser();
    const request = await authorization();
    const landed = await signInThroughContoso(browser, request.url, 'ana');
    expect(landed.url.href.startsWith(RP_REDIRECT_URI)).toBe(true);
    expect((await request.redeem(landed.url)).claims()!.email).toBe('ana@contoso.example');
  });

  it('private_key_jwt at the upstream\'s token endpoint: our key from its file signs in; another key in its place is refused', async () => {
    const providers = nest.get(IdentityProvidersService);
    for (const [id, file] of [['contoso-keys', 'ours.jwk'], ['contoso-stranger', 'stranger.jwk']]) {
      await providers.create({ id, displayName: id, protocol: 'oidc', settings: { issuer: contoso.issuer, clientId: 'latchkey-keys', clientAuth: { method: 'private_key_jwt', key: { file: join(keyDirectory, file) } } } }, 'test');
    }
    const browser = new FederatedBrowser();
    const home = await browser.signInUpstream(await browser.follow(await browser.get(new URL('/federation/contoso-keys/start', issuer))), 'ana');
    expect(home.url.href).toBe(`${issuer.origin}/account`);
    expect(home.page.body).toContain('You are signed in');
    const before = await counts();
    // The same kid, another key: the upstream refuses our assertion (invalid_client), nobody is signed in.
    const other = new FederatedBrowser();
    const answer = await other.signInUpstream(await other.follow(await other.get(new URL('/federation/contoso-stranger/start', issuer))), 'ana');
    expect(answer.page.status).toBe(400);
    expect(answer.page.body).toContain('could not be verified');
    expect(await counts()).toEqual(before);
  });
});
