import { appConfig } from '../../src/config/app.config.js';
import { Browser } from '../helpers/browser.js';
import { authorizeAsUser, authorizeUrl, obtainCode, redirectParams, tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';

describe('authorization code flow (RFC 6749 §4.1)', () => {
  let app: TestApp;
  let client: RegisteredClient;
  let user: TestUser;

  beforeAll(async () => {
    app = await TestApp.start();
    client = await app.createClient();
    user = await app.createUser();
  });
  afterAll(async () => app?.stop());

  it('redirects with code, the unchanged state and iss, then exchanges the code for tokens', async () => {
    const { code, pkce } = await obtainCode(app, client, user, { state: 'af0ifjsldkj' });
    const result = await tokenRequest(app, client, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier });
    expect(result.status).toBe(200);
    expect(result.headers.get('content-type')).toBe('application/json;charset=UTF-8');
    expect(result.headers.get('cache-control')).toBe('no-store');
    expect(result.headers.get('pragma')).toBe('no-cache');
    expect(result.body).toEqual({
      access_token: expect.stringMatching(/^lk_at_[A-Za-z0-9_-]{43}$/),
      token_type: 'bearer',
      expires_in: 3600,
      refresh_token: expect.stringMatching(/^lk_rt_[A-Za-z0-9_-]{43}$/),
      scope: 'notes:read',
    });
  });

  it('returns state exactly as sent, and iss (RFC 9207)', async () => {
    const state = 'a b&c=d/é%';
    const page = await authorizeAsUser(new Browser(app.baseUrl), user, authorizeUrl(client, { scope: 'notes:read', state }));
    expect(page.status).toBe(302);
    const params = redirectParams(page);
    expect(params.get('state')).toBe(state);
    expect(params.get('iss')).toBe(app.app.get(appConfig.KEY).issuer);
    expect(page.location!.startsWith(`${client.redirectUri}?`)).toBe(true);
  });
});
