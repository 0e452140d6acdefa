/**
 * Threat: downgrade of the authentication level (issue 33). A client asks for a second factor or a
 * passkey (acr_values, default_acr_values) and must never receive a code for a sign-in that does
 * not reach it: not with prompt=none, not after a password alone, not with acr_values naming only
 * levels this server does not know, not by coming back with the request's consent form.
 */
import { jest } from '@jest/globals';
import { decodeJwt } from 'jose';
import { Browser, hiddenFields, isLoginPage } from '../helpers/browser.js';
import { authorizeUrl, newPkce, redirectParams, type Pkce } from '../helpers/oauth-flow.js';
import { enrolFrom, redeemFrom, signInWithPassword } from '../helpers/second-factor.js';
import { TestApp, type RegisteredClient } from '../helpers/test-app.js';
import { totpCode } from '../helpers/totp.js';

const MFA = 'urn:latchkey:acr:mfa';
const PHR = 'urn:latchkey:acr:phr';

describe('acr downgrade', () => {
  let app: TestApp;
  let client: RegisteredClient;
  let offsetMs = 0;
  const now = () => Date.now() + offsetMs;

  beforeAll(async () => {
    app = await TestApp.start();
    client = await app.createClient({ name: 'Bank', redirectUris: ['https://bank.example/cb'], scope: 'notes:read' });
    jest.spyOn(app.clock, 'now').mockImplementation(() => new Date(now()));
  });
  afterAll(async () => app?.stop());
  beforeEach(() => {
    offsetMs += 30_000;
  });

  const url = (pkce: Pkce, params: Record<string, string>) => authorizeUrl(client, { scope: 'openid notes:read', state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256', ...params });

  async function codeCount(): Promise<number> {
    return app.dataSource.createQueryBuilder().from('authorization_codes', 'c').where('c.client_id = :id', { id: client.clientId }).getCount();
  }

  it('a password-only session never gets a code for acr mfa: not silently, not with prompt=none, not through the consent form', async () => {
    const user = await app.createUser();
    const browser = new Browser(app.baseUrl);
    await signInWithPassword(browser, user);
    const before = await codeCount();
    const pkce = newPkce();

    const silent = await browser.get(url(pkce, { acr_values: MFA, prompt: 'none' }));
    expect(redirectParams(silent).get('error')).toBe('interaction_required');
    const asked = await browser.get(url(pkce, { acr_values: MFA }));
    expect(asked.location).toMatch(/^\/account\/one-time-codes\?/);
    // A consent form for the same request, posted by the session itself, is held to the same level.
    const query = url(pkce, { acr_values: MFA }).slice('/authorize?'.length);
    const home = await browser.get('/account');
    const forged = await browser.post('/consent', { csrf_token: hiddenFields(home.body, '/logout').csrf_token, authorization_request: query, decision: 'allow' });
    expect(forged.location).toMatch(/^\/account\/one-time-codes\?/);
    expect(await codeCount()).toBe(before);
  });

  it('acr phr (a passkey) is not met by password and code: refused after the sign-in, never answered at a lower level', async () => {
    const user = await app.createUser();
    const browser = new Browser(app.baseUrl);
    await signInWithPassword(browser, user);
    const { key } = await enrolFrom(browser, await browser.get('/account/one-time-codes'), now());
    offsetMs += 30_000;
    const before = await codeCount();
    const pkce = newPkce();
    const request = url(pkce, { acr_values: PHR });
    const login = await browser.get(request);
    expect(isLoginPage(login)).toBe(true);
    await browser.submit(login, '/login', { username: user.username, password: user.password });
    const back = await browser.submit(await browser.get('/login/code'), '/login/code', { code: totpCode(key, now()) });
    const answer = await browser.get(back.location!);
    expect(redirectParams(answer).get('error')).toBe('access_denied');
    expect(redirectParams(answer).get('code')).toBeNull();
    expect(await codeCount()).toBe(before);
  });

  it('acr_values naming only levels this server does not know is a voluntary request (Core §5.5.1.1): the ID token says the level reached, not the one asked', async () => {
    const user = await app.createUser();
    const browser = new Browser(app.baseUrl);
    await signInWithPassword(browser, user);
    const pkce = newPkce();
    const tokens = await redeemFrom(app, browser, await browser.get(url(pkce, { acr_values: 'urn:example:loa:4' })), client, pkce);
    expect(decodeJwt(tokens.id_token as string).acr).toBe('urn:latchkey:acr:pwd');
  });

  it('a level asked along with an unknown one is still required', async () => {
    const user = await app.createUser();
    const browser = new Browser(app.baseUrl);
    await signInWithPassword(browser, user);
    const pkce = newPkce();
    expect((await browser.get(url(pkce, { acr_values: `urn:example:loa:4 ${MFA}`, prompt: 'none' }))).location).toContain('error=interaction_required');
  });

  it('the acr in the ID token is the one reached, whatever was asked', async () => {
    const user = await app.createUser();
    const browser = new Browser(app.baseUrl);
    await signInWithPassword(browser, user);
    const pkce = newPkce();
    const tokens = await redeemFrom(app, browser, await browser.get(url(pkce, { acr_values: 'urn:latchkey:acr:pwd' })), client, pkce);
    expect(decodeJwt(tokens.id_token as string).acr).toBe('urn:latchkey:acr:pwd');
  });
});
