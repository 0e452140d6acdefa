import { jest } from '@jest/globals';
import { decodeJwt } from 'jose';
import { Browser } from '../helpers/browser.js';
import { authorizeUrl, newPkce } from '../helpers/oauth-flow.js';
import { enrolFrom, redeemFrom } from '../helpers/second-factor.js';
import { TestApp } from '../helpers/test-app.js';

/** MFA_REQUIRED=true (issue 33 part 3): every person must use a second factor, whatever the client asks. */
describe('MFA_REQUIRED', () => {
  let app: TestApp;
  const offsetMs = 0;
  const now = () => Date.now() + offsetMs;

  beforeAll(async () => {
    app = await TestApp.start({ MFA_REQUIRED: 'true' });
    jest.spyOn(app.clock, 'now').mockImplementation(() => new Date(now()));
  });
  afterAll(async () => app?.stop());

  it('a person without a second factor enrols one right after the password, before consent, and may not turn it off', async () => {
    const client = await app.createClient({ redirectUris: ['https://rp.example/cb'], scope: 'notes:read' });
    const user = await app.createUser();
    const browser = new Browser(app.baseUrl);
    const pkce = newPkce();
    const request = authorizeUrl(client, { scope: 'openid notes:read', state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256' });
    const afterPassword = await browser.submit(await browser.get(request), '/login', { username: user.username, password: user.password });
    const next = await browser.get(afterPassword.location!);
    expect(next.location).toBe(`/account/one-time-codes?return_to=${encodeURIComponent(request)}`);
    const enrol = await browser.get(next.location!);
    expect(enrol.body).toContain('Your account needs a second factor');
    expect(enrol.body).not.toContain('Back to your account');
    const { key } = await enrolFrom(browser, enrol, now());
    const claims = decodeJwt((await redeemFrom(app, browser, await browser.get(request), client, pkce)).id_token as string);
    expect(claims.acr).toBe('urn:latchkey:acr:mfa');
    expect(key).toMatch(/^[A-Z2-7]{32}$/);
    expect((await browser.submit(await browser.get('/account'), '/account/one-time-codes/remove')).status).toBe(403);
  });

  it('prompt=none for a person without a second factor answers interaction_required', async () => {
    const client = await app.createClient({ redirectUris: ['https://rp2.example/cb'], scope: 'notes:read' });
    const user = await app.createUser();
    const browser = new Browser(app.baseUrl);
    const login = await browser.get('/login');
    await browser.submit(login, '/login', { username: user.username, password: user.password });
    const pkce = newPkce();
    const answer = await browser.get(authorizeUrl(client, { scope: 'openid', state: 's', prompt: 'none', code_challenge: pkce.challenge, code_challenge_method: 'S256' }));
    expect(new URL(answer.location!).searchParams.get('error')).toBe('interaction_required');
  });
});
