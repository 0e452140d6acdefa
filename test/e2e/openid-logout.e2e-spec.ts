/**
 * OpenID Connect RP-Initiated Logout 1.0 and Back-Channel Logout 1.0, through openid-client and a
 * real receiver listening on loopback. Test names follow the OpenID Foundation's RP-Initiated
 * Logout OP test modules they mirror (oidcc-rp-initiated-logout, …-bad-post-logout-redirect-uri,
 * …-no-id-token-hint, …-only-state) and the back-channel checks of the logout test plans.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { jest } from '@jest/globals';
import { AccountsService } from '../../src/accounts/accounts.service.js';
import { Clock } from '../../src/common/clock.js';
import { PurgeService } from '../../src/housekeeping/purge.service.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { LogoutDeliveryStore } from '../../src/logout/logout-delivery.store.js';
import { UsersService } from '../../src/users/users.service.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { Browser, hiddenFields, isLoginPage } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { LogoutReceiver } from '../helpers/logout-receiver.js';
import { authorizeAsUser } from '../helpers/oauth-flow.js';
import type { TestUser } from '../helpers/test-app.js';
import { dropTestDatabase } from '../helpers/test-database.js';

const REDIRECT_URI = 'http://127.0.0.1:9/callback';
const SIGNED_OUT = 'http://127.0.0.1:9/signed-out';

describe('OpenID Connect logout', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  let user: TestUser;
  let config: oidc.Configuration;
  let clientId: string;
  const receiver = new LogoutReceiver();

  /** Signs the person in on a new browser; returns the browser and the token response. */
  async function signIn(scope = 'openid', inBrowser?: Browser): Promise<{ browser: Browser; tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers }> {
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT_URI, scope, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
    const browser = inBrowser ?? new Browser(url.origin);
    const page = await authorizeAsUser(browser, user, url.href);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(page.location!), { pkceCodeVerifier: verifier, idTokenExpected: true });
    return { browser, tokens };
  }

  /** The delivery record of the session `sid` once it is no longer being sent (pending), or what it is after 5 s. */
  async function settledDelivery(sid: string): Promise<Record<string, unknown> | undefined> {
    const store = nest.get(LogoutDeliveryStore);
    for (let waited = 0; ; waited += 50) {
      const row = (await store.forClient(clientId)).find((delivery) => delivery.sid === sid);
      if ((row && row.status !== 'pending') || waited >= 5000) return row as Record<string, unknown> | undefined;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  const signedIn = async (browser: Browser): Promise<boolean> => !isLoginPage(await browser.get('/login')) && (await browser.get('/login')).status === 302;

  beforeAll(async () => {
    await receiver.start();
    ({ nest, issuer } = await startAtIssuer());
    user = { username: `alice_${Date.now().toString(36)}`, password: 'correct horse battery staple' };
    await nest.get(UsersService).create(user.username, user.password);
    const { client, secret } = await nest.get(ClientsService).create({
      name: 'Logout RP',
      redirectUris: [REDIRECT_URI],
      scope: 'notes:read',
      openId: { post_logout_redirect_uris: [SIGNED_OUT], backchannel_logout_uri: receiver.url },
    });
    clientId = client.id;
    config = await oidc.discovery(issuer, client.id, undefined, oidc.ClientSecretBasic(secret!), { execute: [oidc.allowInsecureRequests] });
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(async () => {
    await nest?.close();
    await receiver.stop();
    await dropTestDatabase();
  });

  describe('RP-Initiated Logout 1.0', () => {
    it('discovery names the end_session_endpoint and back-channel logout with sid', () => {
      const metadata = config.serverMetadata() as Record<string, unknown>;
      expect(metadata.end_session_endpoint).toBe(`${metadata.issuer as string}/session/end`);
      expect(metadata.backchannel_logout_supported).toBe(true);
      expect(metadata.backchannel_logout_session_supported).toBe(true);
    });

    it('oidcc-rp-initiated-logout: with the ID token as hint, signs out at once and returns to the registered URI with state', async () => {
      const { browser, tokens } = await signIn();
      expect(await signedIn(browser)).toBe(true);
      const url = oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: SIGNED_OUT, state: 'bye-123' });
      const page = await browser.get(url.href);
      expect(page.status).toBe(303);
      expect(page.location).toBe(`${SIGNED_OUT}?state=bye-123`);
      expect(await signedIn(browser)).toBe(false);
    });

    it('oidcc-rp-initiated-logout-no-id-token-hint: asks the person first, and signs out only when they say so', async () => {
      const { browser } = await signIn();
      const url = oidc.buildEndSessionUrl(config, { post_logout_redirect_uri: SIGNED_OUT });
      const confirm = await browser.get(url.href);
      expect(confirm.status).toBe(200);
      expect(confirm.body).toContain('Sign out?');
      expect(confirm.body).toContain('Logout RP');
      const stay = await browser.post('/session/end/confirm', { ...hiddenFields(confirm.body, '/session/end/confirm'), decision: 'stay' });
      expect(stay.location).toBe('/');
      expect(await signedIn(browser)).toBe(true);
      const again = await browser.get(url.href);
      const out = await browser.post('/session/end/confirm', { ...hiddenFields(again.body, '/session/end/confirm'), decision: 'sign_out' });
      expect([out.status, out.location]).toEqual([303, SIGNED_OUT]);
      expect(await signedIn(browser)).toBe(false);
    });

    it('refuses a forged confirmation (no CSRF token, or another browser\'s) with 403: nobody is signed out, no client is told', async () => {
      const { browser, tokens } = await signIn();
      const { browser: attacker } = await signIn();
      const attackerForm = hiddenFields((await attacker.get(oidc.buildEndSessionUrl(config, {}).href)).body, '/session/end/confirm');
      const sid = decodeJwt(tokens.id_token!).sid as string;
      for (const fields of [{ decision: 'sign_out' }, { ...attackerForm, decision: 'sign_out' }]) {
        const page = await browser.post('/session/end/confirm', fields, { origin: issuer.origin });
        expect(page.status).toBe(403);
        expect(page.location).toBeUndefined();
      }
      expect(await signedIn(browser)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(receiver.forSession(sid)).toEqual([]);
    });

    it('oidcc-rp-initiated-logout-bad-post-logout-redirect-uri: never redirects to an unregistered URI, and signs nobody out', async () => {
      const { browser, tokens } = await signIn();
      const url = oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: 'https://evil.example/' });
      const page = await browser.get(url.href);
      expect(page.status).toBe(400);
      expect(page.location).toBeUndefined();
      expect(await signedIn(browser)).toBe(true);
    });

    it('oidcc-rp-initiated-logout-bad-id-token-hint: refuses a hint we did not issue, and a client_id that disagrees with the hint', async () => {
      const { browser, tokens } = await signIn();
      const forged = `${tokens.id_token!.split('.').slice(0, 2).join('.')}.${'A'.repeat(342)}`;
      expect((await browser.get(`/session/end?id_token_hint=${forged}`)).status).toBe(400);
      expect((await browser.get(`/session/end?id_token_hint=${tokens.id_token!}&client_id=someone-else`)).status).toBe(400);
      expect(await signedIn(browser)).toBe(true);
    });

    it('oidcc-rp-initiated-logout-no-id-token-hint, as the suite sends it (post_logout_redirect_uri alone, no client_id): 400, since nothing names the client whose URI it must be; nobody is signed out', async () => {
      const { browser } = await signIn();
      const page = await browser.get(`/session/end?${new URLSearchParams({ post_logout_redirect_uri: SIGNED_OUT })}`);
      expect(page.status).toBe(400);
      expect(page.location).toBeUndefined();
      expect(await signedIn(browser)).toBe(true);
    });

    it('oidcc-rp-initiated-logout-query-added-to-post-logout-redirect-uri: the registered URI with a query added is another URI: 400, no redirect, nobody signed out', async () => {
      const { browser, tokens } = await signIn();
      const page = await browser.get(oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: `${SIGNED_OUT}?added=1` }).href);
      expect(page.status).toBe(400);
      expect(page.location).toBeUndefined();
      expect(await signedIn(browser)).toBe(true);
    });

    it('oidcc-rp-initiated-logout-only-state, as the suite sends it (state alone): asks the person, then shows that they are signed out', async () => {
      const { browser } = await signIn();
      const confirm = await browser.get('/session/end?state=only');
      expect(confirm.body).toContain('Sign out?');
      const out = await browser.post('/session/end/confirm', { ...hiddenFields(confirm.body, '/session/end/confirm'), decision: 'sign_out' });
      expect(out.status).toBe(200);
      expect(out.body).toContain('You are signed out');
      expect(await signedIn(browser)).toBe(false);
    });

    it('a client\'s form POST from its own site, which the SameSite=Lax session cookie does not accompany: 303 to the same request as a GET navigation, which carries the cookie, signs the person out and returns with state', async () => {
      const { browser, tokens } = await signIn();
      const form = { id_token_hint: tokens.id_token!, post_logout_redirect_uri: SIGNED_OUT, state: 'posted' };
      const crossSite = await fetch(new URL('/session/end', issuer), { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });
      expect(crossSite.status).toBe(303);
      const location = crossSite.headers.get('location')!;
      expect(Object.fromEntries(new URL(location, issuer).searchParams)).toEqual(form);
      expect(await signedIn(browser)).toBe(true);
      const page = await browser.get(location);
      expect([page.status, page.location]).toEqual([303, `${SIGNED_OUT}?state=posted`]);
      expect(await signedIn(browser)).toBe(false);
      // A POST that does carry the cookie (same site) is answered at once.
      const { browser: other, tokens: others } = await signIn();
      const direct = await other.post('/session/end', { id_token_hint: others.id_token!, post_logout_redirect_uri: SIGNED_OUT, state: 'direct' });
      expect([direct.status, direct.location]).toEqual([303, `${SIGNED_OUT}?state=direct`]);
      expect(await signedIn(other)).toBe(false);
    });

    it.each<[string, (hint: string) => [string, string][]]>([
      ['post_logout_redirect_uri twice (one registered, one not)', (hint) => [['id_token_hint', hint], ['post_logout_redirect_uri', SIGNED_OUT], ['post_logout_redirect_uri', 'https://evil.example/']]],
      ['state longer than 4096 characters', (hint) => [['id_token_hint', hint], ['post_logout_redirect_uri', SIGNED_OUT], ['state', 's'.repeat(4097)]]],
      ['id_token_hint twice', (hint) => [['id_token_hint', hint], ['id_token_hint', hint]]],
    ])('%s → 400, no redirect, nobody signed out (§4: the request is not acted on), by GET and by POST', async (_case, pairs) => {
      const { browser, tokens } = await signIn();
      const query = new URLSearchParams(pairs(tokens.id_token!));
      const got = await browser.get(`/session/end?${query}`);
      expect([got.status, got.location]).toEqual([400, undefined]);
      const crossSite = await fetch(new URL('/session/end', issuer), { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: query });
      expect(crossSite.status).toBe(400);
      expect(await signedIn(browser)).toBe(true);
    });

    it('oidcc-rp-initiated-logout-only-state: with no redirect URI, shows that the person is signed out', async () => {
      const { browser, tokens } = await signIn();
      const page = await browser.get(`/session/end?id_token_hint=${tokens.id_token!}&state=only`);
      expect(page.status).toBe(200);
      expect(page.body).toContain('You are signed out');
    });
  });

  describe('Back-Channel Logout 1.0', () => {
    it('sends the client a signed logout token naming the person and the session when the session ends', async () => {
      const { browser, tokens } = await signIn();
      await browser.get(oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: SIGNED_OUT }).href);
      const [logoutToken] = await receiver.tokensFor((decodeJwt(tokens.id_token!).sid as string));
      expect(logoutToken).toEqual(expect.any(String));
      const jwks = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri!));
      const { payload, protectedHeader } = await jwtVerify(logoutToken, jwks, { issuer: config.serverMetadata().issuer, audience: clientId, typ: 'logout+jwt' });
      const idToken = decodeJwt(tokens.id_token!);
      expect(payload.sub).toBe(idToken.sub);
      expect(payload.sid).toBe(idToken.sid);
      expect(payload.events).toEqual({ 'http://schemas.openid.net/event/backchannel-logout': {} });
      expect(payload.nonce).toBeUndefined();
      expect(payload.jti).toEqual(expect.any(String));
      expect(payload.exp! - payload.iat!).toBeLessThanOrEqual(120);
      expect(protectedHeader.alg).toBe('RS256');
    });

    it('ends the refresh tokens the session held (§2.7): after RP logout a refresh is invalid_grant, while one granted offline_access goes on', async () => {
      const { browser, tokens: online } = await signIn();
      const { tokens: offline } = await signIn('openid offline_access', browser);
      expect(decodeJwt(offline.id_token!).sid).toBe(decodeJwt(online.id_token!).sid);
      await browser.get(oidc.buildEndSessionUrl(config, { id_token_hint: online.id_token!, post_logout_redirect_uri: SIGNED_OUT }).href);
      expect(await signedIn(browser)).toBe(false);
      await expect(oidc.refreshTokenGrant(config, online.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
      const refreshed = await oidc.refreshTokenGrant(config, offline.refresh_token!);
      expect(refreshed.access_token).toEqual(expect.any(String));
    });

    it('also when a password change ends every session of the person, and records the delivery', async () => {
      const { tokens } = await signIn();
      await nest.get(AccountsService).setPassword(user.username, user.password);
      const sid = decodeJwt(tokens.id_token!).sid as string;
      expect(await receiver.tokensFor(sid)).toHaveLength(1);
      // The receiver has the token before the sender has read its answer and recorded the delivery.
      expect(await settledDelivery(sid)).toEqual(expect.objectContaining({ status: 'delivered', attempts: 1, lastError: null }));
    });

    it('retries with backoff when the client answers an error, then records the delivery', async () => {
      const { tokens } = await signIn();
      const sid = (decodeJwt(tokens.id_token!).sid as string);
      receiver.planned.set(sid, [503]);
      await nest.get(AccountsService).setPassword(user.username, user.password);
      expect(await receiver.tokensFor(sid, 2)).toHaveLength(2);
      for (let waited = 0; waited < 5000; waited += 50) {
        const row = (await nest.get(LogoutDeliveryStore).forClient(clientId)).find((delivery) => delivery.sid === sid);
        if (row?.status === 'delivered') {
          expect(row.attempts).toBe(2);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error('the retried notification was not recorded as delivered');
    });

    it('an administrator signing the person out everywhere (users:sign-out) notifies the client too, and the purge keeps the record a week', async () => {
      const { tokens } = await signIn();
      const sid = (decodeJwt(tokens.id_token!).sid as string);
      const result = await runCli(['users:sign-out', '--username', user.username]);
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual({ username: user.username, sessions_ended: expect.any(Number) });
      expect(await receiver.tokensFor(sid)).toHaveLength(1);
      const store = nest.get(LogoutDeliveryStore);
      for (let waited = 0; (await store.forClient(clientId)).some((delivery) => delivery.sid === sid && delivery.status !== 'delivered') && waited < 5000; waited += 50) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const purge = nest.get(PurgeService);
      expect((await purge.purge()).logoutDeliveries).toBe(0);
      const eightDaysLater = new Date(Date.now() + 8 * 86_400_000);
      jest.spyOn(nest.get(Clock), 'now').mockImplementation(() => eightDaysLater);
      expect((await purge.purge()).logoutDeliveries).toBeGreaterThan(0);
      expect((await store.forClient(clientId)).filter((delivery) => delivery.status !== 'pending')).toEqual([]);
    });

    it('a logout token is no ID token: presented as id_token_hint it is refused (Back-Channel Logout §2.4, typ)', async () => {
      const { browser, tokens } = await signIn();
      const sid = (decodeJwt(tokens.id_token!).sid as string);
      await browser.get(oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: SIGNED_OUT }).href);
      const [logoutToken] = await receiver.tokensFor(sid);
      const { browser: other } = await signIn();
      const page = await other.get(`/session/end?id_token_hint=${logoutToken}&post_logout_redirect_uri=${encodeURIComponent(SIGNED_OUT)}`);
      expect(page.status).toBe(400);
      expect(await signedIn(other)).toBe(true);
    });

    it('deleting a person (users:delete) ends their sessions first: the client is told, and the record outlives the person', async () => {
      const bob = { username: `bob_${Date.now().toString(36)}`, password: 'another correct horse battery' };
      await nest.get(UsersService).create(bob.username, bob.password);
      const verifier = oidc.randomPKCECodeVerifier();
      const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT_URI, scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
      const page = await authorizeAsUser(new Browser(url.origin), bob, url.href);
      const tokens = await oidc.authorizationCodeGrant(config, new URL(page.location!), { pkceCodeVerifier: verifier, idTokenExpected: true });
      const idToken = decodeJwt(tokens.id_token!);
      const result = await runCli(['users:delete', '--username', bob.username]);
      expect(result.code).toBe(0);
      const [logoutToken] = await receiver.tokensFor(idToken.sid as string);
      expect(decodeJwt(logoutToken).sub).toBe(idToken.sub);
      const deliveries = await nest.get(LogoutDeliveryStore).forClient(clientId);
      expect(deliveries.filter((delivery) => delivery.sid === idToken.sid)).toHaveLength(1);
    });

    it('owes nothing for a session that signed the client in without openid, nor to a client without a back-channel URI', async () => {
      const before = receiver.received.length;
      const browser = new Browser(issuer.origin);
      await authorizeAsUser(browser, user, oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT_URI, scope: 'notes:read', code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256' }).href);
      await browser.post('/logout', { csrf_token: hiddenFields((await browser.get('/account')).body, '/logout').csrf_token });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(receiver.received.length).toBe(before);
    });
  });
});
