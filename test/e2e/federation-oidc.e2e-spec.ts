/**
 * Issue 45: sign-in through the company's OpenID Connect provider. node-oidc-provider (a certified
 * OP, in its own process) is the company's provider; a stock relying party (openid-client) signs in
 * through Latchkey, whose sign-in page sends the person upstream; the person gets an account here
 * just in time, with the mapped profile, and the relying party gets our ID token.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import * as oidc from 'openid-client';
import type { DataSource } from 'typeorm';
import { ClientsService } from '../../src/clients/clients.service.js';
import { IdentityProvidersService } from '../../src/identity-providers/identity-providers.service.js';
import { UpstreamAccounts } from '../../src/identity-providers/upstream-accounts.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { FederatedBrowser, type Hop } from '../federation/support/federated-browser.js';
import { UpstreamOpenIdProvider } from '../federation/support/upstream-openid-provider.js';

const RP_REDIRECT_URI = 'http://127.0.0.1:9/callback';
const UPSTREAM_SECRET = 'contoso-secret-for-latchkey-0123456789';

describe('sign-in through an upstream OpenID Connect provider', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  let contoso: UpstreamOpenIdProvider;
  let rp: oidc.Configuration;
  let db: DataSource;

  const counts = async () => ({
    users: Number((await db.query('SELECT COUNT(*) AS n FROM "users"'))[0].n),
    links: Number((await db.query('SELECT COUNT(*) AS n FROM "upstream_links"'))[0].n),
    sessions: Number((await db.query('SELECT COUNT(*) AS n FROM "sessions"'))[0].n),
  });

  beforeAll(async () => {
    ({ nest, issuer } = await startAtIssuer({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', CONTOSO_SECRET: UPSTREAM_SECRET }));
    db = nest.get<DataSource>(getDataSourceToken());
    contoso = await UpstreamOpenIdProvider.start(
      {
        ana: { email: 'ana@contoso.example', email_verified: true, name: 'Ana Silva', given_name: 'Ana', family_name: 'Silva', preferred_username: 'ana' },
      },
      [{ client_id: 'latchkey', client_secret: UPSTREAM_SECRET, redirect_uris: [`${issuer.origin}/federation/contoso/callback`], token_endpoint_auth_method: 'client_secret_basic' }],
    );
    await nest.get(IdentityProvidersService).create(
      { id: 'contoso', displayName: 'Contoso', protocol: 'oidc', settings: { issuer: contoso.issuer, clientId: 'latchkey', clientAuth: { method: 'client_secret_basic', secret: { env: 'CONTOSO_SECRET' } }, domains: ['contoso.example'], trustEmail: true } },
      'test',
    );
    const { client, secret } = await nest.get(ClientsService).create({ name: 'Expense reports', redirectUris: [RP_REDIRECT_URI], scope: 'notes:read' });
    rp = await oidc.discovery(issuer, client.id, undefined, oidc.ClientSecretBasic(secret!), { execute: [oidc.allowInsecureRequests] });
  });

  afterAll(async () => {
    await contoso?.stop();
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
  });
});
