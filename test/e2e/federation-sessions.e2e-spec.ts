/**
 * Issue 45: sessions that an upstream OpenID Connect provider started. Signing out here signs the
 * person out there (RP-Initiated Logout), the provider's back-channel logout ends the session
 * here, a person links an upstream account to theirs only by an explicit step, and a client may
 * allow only some ways to sign in (the authentication policy enforces it).
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { ClientsService } from '../../src/clients/clients.service.js';
import { IdentityProvidersService } from '../../src/identity-providers/identity-providers.service.js';
import { SignInMethods } from '../../src/identity-providers/sign-in-methods.js';
import { UpstreamAccounts } from '../../src/identity-providers/upstream-accounts.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { hiddenFields } from '../helpers/browser.js';
import { enrolFrom } from '../helpers/second-factor.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { FederatedBrowser, type Hop } from '../federation/support/federated-browser.js';
import { RogueOpenIdProvider } from '../federation/support/rogue-openid-provider.js';
import { UpstreamOpenIdProvider } from '../federation/support/upstream-openid-provider.js';

const RP_REDIRECT_URI = 'http://127.0.0.1:9/callback';
const RP_SIGNED_OUT = 'http://127.0.0.1:9/signed-out';
const UPSTREAM_SECRET = 'contoso-secret-for-latchkey-0123456789';

describe('upstream sessions: sign-out both ways, linking, per-client rules', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  let contoso: UpstreamOpenIdProvider;
  let rogue: RogueOpenIdProvider;
  let db: DataSource;
  let clientId: string;

  const liveSessions = async (username: string): Promise<number> =>
    Number((await db.query(`SELECT COUNT(*) AS n FROM "sessions" s JOIN "users" u ON u."id" = s."user_id" WHERE u."username" = '${username}' AND s."ended_at" IS NULL`))[0].n);

  beforeAll(async () => {
    ({ nest, issuer } = await startAtIssuer({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', CONTOSO_SECRET: UPSTREAM_SECRET }));
    db = nest.get<DataSource>(getDataSourceToken());
    contoso = await UpstreamOpenIdProvider.start(
      {
        ana: { email: 'ana@contoso.example', email_verified: true, preferred_username: 'ana' },
        bea: { email: 'bea@contoso.example', email_verified: true, preferred_username: 'bea' },
        fabio: { email: 'fabio@contoso.example', email_verified: true, preferred_username: 'fabio' },
      },
      [
        {
          client_id: 'latchkey',
          client_secret: UPSTREAM_SECRET,
          redirect_uris: [`${issuer.origin}/federation/contoso/callback`],
          post_logout_redirect_uris: [`${issuer.origin}/federation/contoso/signed-out`],
          backchannel_logout_uri: `${issuer.origin}/federation/contoso/backchannel-logout`,
          backchannel_logout_session_required: true,
        },
      ],
    );
    await nest.get(IdentityProvidersService).create({ id: 'contoso', displayName: 'Contoso', protocol: 'oidc', settings: { issuer: contoso.issuer, clientId: 'latchkey', clientAuth: { method: 'client_secret_basic', secret: { env: 'CONTOSO_SECRET' } } } }, 'test');
    rogue = await RogueOpenIdProvider.start('latchkey-at-rogue');
    await nest.get(IdentityProvidersService).create({ id: 'rogue', displayName: 'Rogue', protocol: 'oidc', settings: { issuer: rogue.issuer, clientId: 'latchkey-at-rogue', userinfo: false, signOutUpstream: false } }, 'test');
    const { client } = await nest.get(ClientsService).create({ name: 'Expense reports', redirectUris: [RP_REDIRECT_URI], scope: 'notes:read', openId: { post_logout_redirect_uris: [RP_SIGNED_OUT] } });
    clientId = client.id;
    await nest.get(UsersService).create('lucia', 'correct horse battery staple');
  });

  afterAll(async () => {
    await rogue?.stop();
    await contoso?.stop();
    await nest?.close();
    await dropTestDatabase();
  });

  /** Signs `login` in here through Contoso, from the sign-in page of our home: lands on our home page. */
  async function signInAtHome(browser: FederatedBrowser, login: string): Promise<Hop> {
    const upstreamForm = await browser.follow(await browser.get(new URL('/federation/contoso/start?return_to=%2F', issuer)));
    const home = await browser.signInUpstream(upstreamForm, login);
    // Home sends a signed-in person on to the account page (issue 48).
    expect(home.url.href).toBe(`${issuer.origin}/account`);
    expect(home.page.body).toContain('You are signed in');
    return home;
  }

  describe('sign-out', () => {
    it('signing out here signs the person out at Contoso too, then comes home', async () => {
      const browser = new FederatedBrowser();
      const home = await signInAtHome(browser, 'ana');
      expect(await liveSessions('ana')).toBe(1);
      const answer = await browser.post(new URL('/logout', issuer), hiddenFields(home.page.body, '/logout'));
      const toUpstream = new URL(answer.page.location!);
      expect(toUpstream.origin).toBe(contoso.issuer);
      expect(toUpstream.searchParams.get('post_logout_redirect_uri')).toBe(`${issuer.origin}/federation/contoso/signed-out`);
      expect(toUpstream.searchParams.get('id_token_hint')).toMatch(/^ey/);
      expect(await liveSessions('ana')).toBe(0);
      const confirm = await browser.follow(answer);
      const back = await browser.confirmUpstreamLogout(confirm);
      expect(back.url.href).toBe(`${issuer.origin}/`);
      expect(back.page.body).not.toContain('You are signed in');
      // Signed out at Contoso as well: a new sign-in there asks again.
      const again = await browser.follow(await browser.get(new URL('/federation/contoso/start', issuer)));
      expect(again.page.body).toContain('Contoso sign-in');
    });

    it('RP-initiated logout here goes through Contoso and ends at the relying party\'s registered URI with its state', async () => {
      const browser = new FederatedBrowser();
      await signInAtHome(browser, 'ana');
      const end = await browser.get(new URL(`/session/end?client_id=${clientId}&post_logout_redirect_uri=${encodeURIComponent(RP_SIGNED_OUT)}&state=rp-state`, issuer));
      // Not proven by an id_token_hint: the person confirms first.
      const confirmed = await browser.post(new URL('/session/end/confirm', issuer), { ...hiddenFields(end.page.body, '/session/end/confirm'), decision: 'sign_out' });
      expect(new URL(confirmed.page.location!).origin).toBe(contoso.issuer);
      const back = await browser.confirmUpstreamLogout(await browser.follow(confirmed), { stopAt: RP_SIGNED_OUT });
      expect(back.url.href).toBe(`${RP_SIGNED_OUT}?state=rp-state`);
      expect(await liveSessions('ana')).toBe(0);
    });

    it('open redirect through the upstream\'s return: a return_to elsewhere comes home after the sign-in', async () => {
      for (const returnTo of ['https://evil.example/', '//evil.example/', '/\\evil.example', '/authorize\r\nLocation: https://evil.example/']) {
        const browser = new FederatedBrowser();
        const form = await browser.follow(await browser.get(new URL(`/federation/contoso/start?return_to=${encodeURIComponent(returnTo)}`, issuer)));
        const back = await browser.signInUpstream(form, 'ana');
        expect(back.url.href).toBe(`${issuer.origin}/account`);
      }
    });

    it('a return to /signed-out that this browser did not start goes home, nowhere else', async () => {
      const answer = await new FederatedBrowser().get(new URL('/federation/contoso/signed-out?state=x', issuer));
      expect(answer.page.location).toBe('/');
    });

    it('Contoso\'s back-channel logout (a sign-out there) ends the session here', async () => {
      const browser = new FederatedBrowser();
      await signInAtHome(browser, 'bea');
      expect(await liveSessions('bea')).toBe(1);
      // The person signs out at Contoso itself.
      const confirm = await browser.get(new URL('/session/end', contoso.issuer));
      await browser.confirmUpstreamLogout(confirm);
      for (let i = 0; i < 50 && (await liveSessions('bea')) > 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await liveSessions('bea')).toBe(0);
      expect((await browser.get(new URL('/account', issuer))).page.body).not.toContain('You are signed in');
    });
  });

  describe('back-channel logout tokens that are not to be believed', () => {
    /** A session here started by the rogue provider's honest sign-in of `subject`. */
    async function rogueSession(subject: string, browser = new FederatedBrowser()): Promise<Hop> {
      const hop = await browser.get(new URL('/federation/rogue/start', issuer));
      const to = new URL(hop.page.location!);
      Object.assign(rogue, { nonce: to.searchParams.get('nonce'), forgery: 'honest', subject, claims: { preferred_username: subject } });
      const answer = await browser.get(new URL(`/federation/rogue/callback?code=c&state=${to.searchParams.get('state')}&iss=${encodeURIComponent(rogue.issuer)}`, issuer));
      expect(answer.page.status).toBe(303);
      return answer;
    }
    const post = (token: string) => fetch(new URL('/federation/rogue/backchannel-logout', issuer), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ logout_token: token }) });

    it.each([
      ['signed with a key the provider does not publish', { unpublished: true }, {}],
      ['for another audience', { audience: 'someone-else' }, {}],
      ['with a nonce', {}, { nonce: 'n' }],
      ['without the event', {}, { events: {} }],
    ])('a logout token %s is refused (400), and the session lives', async (_, options, claims) => {
      await rogueSession('rita');
      const before = await liveSessions('rita');
      const answer = await post(await rogue.logoutToken({ sub: 'rita', ...claims }, options));
      expect(answer.status).toBe(400);
      expect(((await answer.json()) as { error: string }).error).toBe('invalid_request');
      expect(await liveSessions('rita')).toBe(before);
    });

    it('a session that asked for the local second factor after the upstream sign-in is ended too', async () => {
      const first = new FederatedBrowser();
      await rogueSession('tina', first);
      const enrolled = await enrolFrom(first.site(issuer), await first.site(issuer).get('/account/one-time-codes'), Date.now());
      // Rogue is not trusted for its level: tina's own second factor is asked after it.
      const second = new FederatedBrowser();
      const asked = await rogueSession('tina', second);
      expect(asked.page.location).toBe('/login/code');
      const codePage = await second.site(issuer).get('/login/code');
      expect((await second.site(issuer).submit(codePage, '/login/code', { code: enrolled.recoveryCodes[0] })).status).toBe(303);
      expect(await liveSessions('tina')).toBe(2);
      expect((await post(await rogue.logoutToken({ sid: 'rogue-session-of-tina' }))).status).toBe(200);
      expect(await liveSessions('tina')).toBe(0);
    });

    it('a valid one ends the session (by sid); the same token again is refused', async () => {
      await rogueSession('rolf');
      const token = await rogue.logoutToken({ sid: 'rogue-session-of-rolf' });
      expect((await post(token)).status).toBe(200);
      expect(await liveSessions('rolf')).toBe(0);
      await rogueSession('rolf');
      expect((await post(token)).status).toBe(400);
      expect(await liveSessions('rolf')).toBe(1);
    });
  });

  describe('linking an upstream account to a local person', () => {
    async function signInLocally(browser: FederatedBrowser): Promise<Hop> {
      const page = await browser.get(new URL('/login', issuer));
      const answer = await browser.post(new URL('/login', issuer), { ...hiddenFields(page.page.body, '/login'), username: 'lucia', password: 'correct horse battery staple' });
      return browser.follow(answer);
    }

    it('only by the person\'s own step, signed in here: then either way signs them in', async () => {
      const lucia = await nest.get(UsersService).findByUsername('lucia');
      const browser = new FederatedBrowser();
      const home = await signInLocally(browser);
      expect(home.page.body).toContain('Link your Contoso account');
      const linking = await browser.post(new URL('/federation/contoso/link', issuer), hiddenFields(home.page.body, '/federation/contoso/link'));
      const sent = new URL(linking.page.location!);
      expect(sent.searchParams.get('prompt')).toBe('login');
      const back = await browser.signInUpstream(await browser.follow(linking), 'fabio');
      expect(back.url.href).toBe(`${issuer.origin}/account`);
      expect(back.page.body).toContain('You can sign in with <strong>Contoso</strong>');
      expect(await nest.get(UpstreamAccounts).linksOf(lucia!.id)).toEqual([expect.objectContaining({ idp: 'contoso', subject: 'fabio', origin: 'linked' })]);

      // fabio at Contoso is lucia here.
      const other = new FederatedBrowser();
      const signedIn = await other.signInUpstream(await other.follow(await other.get(new URL('/federation/contoso/start', issuer))), 'fabio');
      expect(signedIn.page.body).toContain('as <strong>lucia</strong>');
    });

    it('refused without a session, without the form\'s token, and cross-site: nothing linked', async () => {
      const lucia = await nest.get(UsersService).findByUsername('lucia');
      const links = await nest.get(UpstreamAccounts).linksOf(lucia!.id);
      expect((await new FederatedBrowser().post(new URL('/federation/rogue/link', issuer), { csrf_token: 'x' })).page.location).toBeUndefined();
      const browser = new FederatedBrowser();
      const home = await signInLocally(browser);
      expect((await browser.post(new URL('/federation/rogue/link', issuer), { csrf_token: 'not-the-token' })).page.status).toBe(403);
      const crossSite = await browser.site(issuer).post(`${issuer.origin}/federation/rogue/link`, hiddenFields(home.page.body, '/federation/rogue/link'), { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' });
      expect(crossSite.status).toBe(403);
      expect(await nest.get(UpstreamAccounts).linksOf(lucia!.id)).toEqual(links);
    });

    it('an upstream account linked to someone else is not linked again', async () => {
      await nest.get(UsersService).create('marta', 'correct horse battery staple');
      const marta = await nest.get(UsersService).findByUsername('marta');
      await expect(nest.get(UpstreamAccounts).link('contoso', 'fabio', marta!, 'admin', 'test')).rejects.toThrow('linked to another person already');
      expect(await nest.get(UpstreamAccounts).linksOf(marta!.id)).toEqual([]);
    });
  });

  describe('a client that allows only Contoso', () => {
    let strictId: string;
    beforeAll(async () => {
      const { client } = await nest.get(ClientsService).create({ name: 'Payroll', redirectUris: [RP_REDIRECT_URI], scope: 'notes:read' });
      strictId = client.id;
      await nest.get(SignInMethods).setRule(strictId, { identityProviders: ['contoso'], localSignIn: false });
    });
    const authorize = (extra = '') => new URL(`/authorize?response_type=code&client_id=${strictId}&redirect_uri=${encodeURIComponent(RP_REDIRECT_URI)}&scope=openid&state=s&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256${extra}`, issuer);

    it('offers only Contoso: no password form, no other provider', async () => {
      const page = await new FederatedBrowser().get(authorize());
      expect(page.page.status).toBe(200);
      expect(page.page.body).not.toContain('action="/login"');
      expect(page.page.body).toContain('id="upstream-contoso"');
      expect(page.page.body).not.toContain('id="upstream-rogue"');
    });

    it('a session signed in with a password is asked to sign in again (with prompt=none: login_required)', async () => {
      const browser = new FederatedBrowser();
      const page = await browser.get(new URL('/login', issuer));
      await browser.post(new URL('/login', issuer), { ...hiddenFields(page.page.body, '/login'), username: 'lucia', password: 'correct horse battery staple' });
      const asked = await browser.get(authorize());
      expect(asked.page.status).toBe(200);
      expect(asked.page.body).toContain('id="upstream-contoso"');
      const none = await browser.get(authorize('&prompt=none'));
      expect(new URL(none.page.location!).searchParams.get('error')).toBe('login_required');
    });

    it('a session through Contoso goes on to consent', async () => {
      const browser = new FederatedBrowser();
      const page = await browser.get(authorize());
      const link = /href="(\/federation\/contoso\/start[^"]+)"/.exec(page.page.body)![1].replace(/&amp;/g, '&');
      const landed = await browser.signInUpstream(await browser.follow(await browser.get(new URL(link, issuer))), 'ana');
      expect(landed.page.body).toContain('action="/consent"');
    });
  });
});
