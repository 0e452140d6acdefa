import { jest } from '@jest/globals';
import { decodeJwt } from 'jose';
import { User } from '../../src/users/user.entity.js';
import { Browser, isLoginPage } from '../helpers/browser.js';
import { authorizeUrl, basicAuth, introspect, newPkce, redirectParams, tokenRequest, type Pkce } from '../helpers/oauth-flow.js';
import { enrolFrom, redeemFrom, signInWithPassword } from '../helpers/second-factor.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';
import { totpCode } from '../helpers/totp.js';

const MFA = 'urn:latchkey:acr:mfa';
const PWD = 'urn:latchkey:acr:pwd';

/**
 * Issue 33 parts 3 and 4: acr_values at /authorize, the client's default_acr_values and the
 * administrator's requirement decide the level a sign-in must reach; a password-only session asked
 * for more is asked only for the second factor (step-up), or enrols one; the ID token, its refresh
 * and introspection say the level reached.
 */
describe('step-up and acr', () => {
  let app: TestApp;
  let client: RegisteredClient;
  let resourceServer: RegisteredClient;
  let offsetMs = 0;
  const now = () => Date.now() + offsetMs;

  beforeAll(async () => {
    app = await TestApp.start();
    client = await app.createClient({ name: 'Acme Notes', redirectUris: ['https://acme.example/cb'], scope: 'notes:read', grantTypes: ['authorization_code', 'refresh_token'] as never });
    resourceServer = await app.createClient({ name: 'Notes API', redirectUris: ['https://api.example/cb'], scope: 'tokens:introspect', grantTypes: ['client_credentials'] as never });
    jest.spyOn(app.clock, 'now').mockImplementation(() => new Date(now()));
  });
  afterAll(async () => app?.stop());
  beforeEach(() => {
    offsetMs += 30_000;
  });

  function url(pkce: Pkce, params: Record<string, string> = {}, to: RegisteredClient = client): string {
    return authorizeUrl(to, { scope: 'openid notes:read', state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256', ...params });
  }

  /** A person signed in with a password only in `browser`, who then enrolled one-time codes in another browser. */
  async function passwordSessionWithFactor(): Promise<{ user: TestUser; key: string; browser: Browser }> {
    const user = await app.createUser();
    const browser = new Browser(app.baseUrl);
    await signInWithPassword(browser, user);
    const other = new Browser(app.baseUrl);
    await signInWithPassword(other, user);
    const { key } = await enrolFrom(other, await other.get('/account/one-time-codes'), now());
    offsetMs += 30_000;
    return { user, key, browser };
  }

  it('discovery lists the acr values', async () => {
    const metadata = (await (await fetch(app.url('/.well-known/openid-configuration'))).json()) as Record<string, unknown>;
    expect(metadata.acr_values_supported).toEqual(['urn:latchkey:acr:pwd', 'urn:latchkey:acr:mfa', 'urn:latchkey:acr:phr']);
    expect(metadata.claims_supported).toEqual(expect.arrayContaining(['acr', 'amr']));
  });

  it('a password-only session asked for acr mfa is asked only for the code, then answered with acr mfa and a new auth_time', async () => {
    const { key, browser } = await passwordSessionWithFactor();
    const before = newPkce();
    const first = decodeJwt((await redeemFrom(app, browser, await browser.get(url(before)), client, before)).id_token as string);
    expect(first.acr).toBe(PWD);

    offsetMs += 5_000;
    const pkce = newPkce();
    const stepUp = await browser.get(url(pkce, { acr_values: MFA }));
    expect(stepUp.status).toBe(302);
    expect(stepUp.location).toBe('/login/code');
    const codePage = await browser.get('/login/code');
    expect(codePage.body).toContain('action="/login/code"');
    expect(codePage.body).not.toContain('type="password"');
    const back = await browser.submit(codePage, '/login/code', { code: totpCode(key, now()) });
    expect(back.status).toBe(303);
    const tokens = await redeemFrom(app, browser, await browser.get(back.location!), client, pkce);
    const claims = decodeJwt(tokens.id_token as string);
    expect(claims.acr).toBe(MFA);
    expect(claims.amr).toEqual(['pwd', 'otp', 'mfa']);
    expect(claims.auth_time).toBeGreaterThan(first.auth_time as number);

    // The refresh's ID token keeps the level; introspection tells a resource server the level and when.
    const refreshed = await tokenRequest(app, client, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token as string });
    expect(decodeJwt(refreshed.body.id_token as string).acr).toBe(MFA);
    const described = await introspect(app, resourceServer, tokens.access_token as string);
    expect(described).toMatchObject({ active: true, acr: MFA, auth_time: claims.auth_time });
  });

  it('acr_values pushed to /par (RFC 9126) are required as at /authorize', async () => {
    const { key, browser } = await passwordSessionWithFactor();
    const pkce = newPkce();
    const pushed = await fetch(app.url('/par'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(client.clientId, client.clientSecret!) },
      body: new URLSearchParams({ response_type: 'code', client_id: client.clientId, redirect_uri: client.redirectUri, scope: 'openid notes:read', state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256', acr_values: MFA }).toString(),
    });
    expect(pushed.status).toBe(201);
    const { request_uri: requestUri } = (await pushed.json()) as { request_uri: string };
    const request = `/authorize?${new URLSearchParams({ client_id: client.clientId, request_uri: requestUri })}`;
    expect((await browser.get(request)).location).toBe('/login/code');
    const back = await browser.submit(await browser.get('/login/code'), '/login/code', { code: totpCode(key, now()) });
    const claims = decodeJwt((await redeemFrom(app, browser, await browser.get(back.location!), client, pkce)).id_token as string);
    expect(claims.acr).toBe(MFA);
  });

  it('prompt=none with an acr the session does not reach answers interaction_required, without a page or a code', async () => {
    const { browser } = await passwordSessionWithFactor();
    const pkce = newPkce();
    const answer = await browser.get(url(pkce, { acr_values: MFA, prompt: 'none' }));
    expect(answer.status).toBe(302);
    expect(redirectParams(answer).get('error')).toBe('interaction_required');
    expect(redirectParams(answer).get('code')).toBeNull();
  });

  it('a person asked for acr mfa who has no second factor enrols one, then is answered', async () => {
    const user = await app.createUser();
    const browser = new Browser(app.baseUrl);
    const pkce = newPkce();
    const request = url(pkce, { acr_values: MFA });
    const login = await browser.get(request);
    expect(isLoginPage(login)).toBe(true);
    const afterPassword = await browser.submit(login, '/login', { username: user.username, password: user.password });
    const enrolRedirect = await browser.get(afterPassword.location!);
    expect(enrolRedirect.location).toBe(`/account/one-time-codes?return_to=${encodeURIComponent(request)}`);
    const { done } = await enrolFrom(browser, await browser.get(enrolRedirect.location!), now());
    expect(done.body).toContain(`href="${request.replace(/&/g, '&amp;')}"`);
    const claims = decodeJwt((await redeemFrom(app, browser, await browser.get(request), client, pkce)).id_token as string);
    expect(claims.acr).toBe(MFA);
  });

  it("a client's default_acr_values apply to requests that name none", async () => {
    const strict = await app.createClient({ name: 'Strict', redirectUris: ['https://strict.example/cb'], scope: 'notes:read', openId: { default_acr_values: [MFA] } as never });
    const { browser } = await passwordSessionWithFactor();
    const pkce = newPkce();
    expect((await browser.get(url(pkce, {}, strict))).location).toBe('/login/code');
  });

  it('a person an administrator requires a second factor of enrols one right after the password, before consent', async () => {
    const user = await app.createUser();
    await app.dataSource.manager.update(User, { username: user.username }, { requireMfa: true });
    const browser = new Browser(app.baseUrl);
    const pkce = newPkce();
    const request = url(pkce);
    const afterPassword = await browser.submit(await browser.get(request), '/login', { username: user.username, password: user.password });
    const next = await browser.get(afterPassword.location!);
    expect(next.location).toMatch(/^\/account\/one-time-codes\?return_to=/);
    const enrol = await browser.get(next.location!);
    expect(enrol.body).toContain('Your account needs a second factor');
    await enrolFrom(browser, enrol, now());
    const claims = decodeJwt((await redeemFrom(app, browser, await browser.get(request), client, pkce)).id_token as string);
    expect(claims.acr).toBe(MFA);
  });

  it('max_age applies to the factor too: a stale session signs in again with password and code', async () => {
    const { user, key, browser } = await passwordSessionWithFactor();
    offsetMs += 120_000;
    const pkce = newPkce();
    const request = url(pkce, { max_age: '60' });
    const login = await browser.get(request);
    expect(isLoginPage(login)).toBe(true);
    const afterPassword = await browser.submit(login, '/login', { username: user.username, password: user.password });
    expect(afterPassword.location).toBe('/login/code');
    const back = await browser.submit(await browser.get('/login/code'), '/login/code', { code: totpCode(key, now()) });
    const claims = decodeJwt((await redeemFrom(app, browser, await browser.get(back.location!), client, pkce)).id_token as string);
    expect(claims.acr).toBe(MFA);
    expect(Math.floor(now() / 1000) - (claims.auth_time as number)).toBeLessThan(5);
  });
});
