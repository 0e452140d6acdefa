import { Browser } from '../helpers/browser.js';
import { ApiClient } from '../helpers/api-client.js';
import { basicAuth, postToken, tokenRequest, type TokenResult } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';
import { expectTokenError, TOKEN_JSON_CONTENT_TYPE } from '../helpers/token-assertions.js';
import { withEnv } from '../helpers/with-env.js';

const FREE_FAILURES = 3;

/** A form body with a parameter repeated, which URLSearchParams-from-object cannot express. */
async function postRawToken(app: TestApp, body: string, client: RegisteredClient): Promise<TokenResult> {
  const response = await fetch(app.url('/token'), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(client.clientId, client.clientSecret!) },
    body,
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

/** The resource owner password credentials grant (RFC 6749 §4.3): off unless an administrator opts a confidential client in (RFC 9700 §2.4). */
describe('password grant (RFC 6749 §4.3)', () => {
  let app: TestApp;
  let passwordClient: RegisteredClient;
  let codeClient: RegisteredClient;
  let publicClient: RegisteredClient;
  let introspector: RegisteredClient;
  let user: TestUser;

  beforeAll(async () => {
    app = await TestApp.start({ LOGIN_FREE_FAILURES: String(FREE_FAILURES) });
    passwordClient = await app.createClient({ name: 'Legacy Desktop App', redirectUris: [], scope: 'notes:read notes:write tokens:introspect', grantTypes: ['password', 'refresh_token'] });
    codeClient = await app.createClient({ name: 'Modern App', scope: 'notes:read' });
    publicClient = await app.createClient({ name: 'Public App', scope: 'notes:read', isPublic: true });
    introspector = await app.createClient({ name: 'RS', redirectUris: [], scope: 'tokens:introspect', grantTypes: ['client_credentials'] });
    user = await app.createUser();
  });
  afterAll(async () => {
    await app?.stop();
    delete process.env.LOGIN_FREE_FAILURES;
  });

  const password = (client: RegisteredClient, params: Record<string, string>) => tokenRequest(app, client, { grant_type: 'password', ...params });

  async function tokenCount(clientId: string): Promise<number> {
    return (await app.dataSource.query<unknown[]>(`SELECT id FROM tokens WHERE client_id = '${clientId}'`)).length;
  }

  describe('refused by default (RFC 9700 §2.4)', () => {
    it('a confidential client not registered for it → unauthorized_client, even with the right password; no token issued', async () => {
      const reply = await password(codeClient, { username: user.username, password: user.password });
      expectTokenError(reply, 400, 'unauthorized_client');
      expect(await tokenCount(codeClient.clientId)).toBe(0);
    });

    it('a public client → unauthorized_client', async () => {
      const reply = await postToken(app, { grant_type: 'password', client_id: publicClient.clientId, username: user.username, password: user.password });
      expectTokenError(reply, 400, 'unauthorized_client');
    });

    it('a public client with the grant in its row (registration refuses it; the grant checks again) → unauthorized_client', async () => {
      const sneaky = await app.createClient({ name: 'Sneaky', scope: 'notes:read', isPublic: true });
      await app.dataSource.query(`UPDATE clients SET grant_types = '["password"]' WHERE id = '${sneaky.clientId}'`);
      const reply = await postToken(app, { grant_type: 'password', client_id: sneaky.clientId, username: user.username, password: user.password });
      expectTokenError(reply, 400, 'unauthorized_client');
      expect(await tokenCount(sneaky.clientId)).toBe(0);
    });

    it('an unauthenticated request → invalid_client (401)', async () => {
      const reply = await postToken(app, { grant_type: 'password', username: user.username, password: user.password });
      expectTokenError(reply, 401, 'invalid_client');
    });

    it('a wrong client secret → invalid_client (401)', async () => {
      const reply = await postToken(app, { grant_type: 'password', username: user.username, password: user.password }, { authorization: basicAuth(passwordClient.clientId, 'lk_cs_wrong') });
      expectTokenError(reply, 401, 'invalid_client');
    });
  });

  describe('a confidential client registered for it (§4.3.2, §4.3.3)', () => {
    it('issues an access token and no refresh token (PASSWORD_GRANT_REFRESH_TOKENS is off); it reads the data API as the user', async () => {
      const reply = await password(passwordClient, { username: user.username, password: user.password, scope: 'notes:read' });
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toBe(TOKEN_JSON_CONTENT_TYPE);
      expect(reply.headers.get('cache-control')).toBe('no-store');
      expect(reply.headers.get('pragma')).toBe('no-cache');
      expect(reply.body).toEqual({ access_token: expect.stringMatching(/^lk_at_[A-Za-z0-9_-]{43}$/), token_type: 'bearer', expires_in: 3600, scope: 'notes:read' });

      const api = new ApiClient(app, reply.body.access_token as string);
      expect((await api.get('/api/v1/notes')).status).toBe(200);
      expect((await api.post('/api/v1/notes', { title: 'x' })).status).toBe(403);

      const introspection = await fetch(app.url('/introspect'), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(introspector.clientId, introspector.clientSecret!) },
        body: new URLSearchParams({ token: reply.body.access_token as string }).toString(),
      });
      const users = await app.dataSource.query<{ id: string }[]>(`SELECT id FROM users WHERE username = '${user.username}'`);
      expect(await introspection.json()).toMatchObject({ active: true, client_id: passwordClient.clientId, sub: users[0].id, scope: 'notes:read' });
    });

    it('gives a client registered for MAC tokens a MAC token with its mac_key, as the other grants do', async () => {
      const macClient = await app.createClient({ name: 'Legacy signing app', redirectUris: [], scope: 'notes:read', grantTypes: ['password'], accessTokenType: 'mac' });
      const reply = await password(macClient, { username: user.username, password: user.password });
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({ token_type: 'mac', mac_algorithm: 'hmac-sha-256', mac_key: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
      // A MAC token is refused as a bearer token (it is only good with its key).
      expect((await new ApiClient(app, reply.body.access_token as string).get('/api/v1/notes')).status).toBe(401);
    });

    it('accepts client_secret_post as well as Basic, from a client registered for it', async () => {
      const postClient = await app.createClient({ name: 'Legacy form app', redirectUris: [], scope: 'notes:read notes:write', grantTypes: ['password'], tokenEndpointAuthMethod: 'client_secret_post' });
      const reply = await postToken(app, { grant_type: 'password', client_id: postClient.clientId, client_secret: postClient.clientSecret!, username: user.username, password: user.password, scope: 'notes:write' });
      expect({ status: reply.status, scope: reply.body.scope }).toEqual({ status: 200, scope: 'notes:write' });
    });

    it('without scope grants the client\'s data scopes, never its client-only scopes (tokens:introspect)', async () => {
      const reply = await password(passwordClient, { username: user.username, password: user.password });
      expect({ status: reply.status, scope: reply.body.scope }).toEqual({ status: 200, scope: 'notes:read notes:write' });
    });

    it('records the grant as the user\'s consent, so that it shows on /account/access and can be withdrawn', async () => {
      const other = await app.createUser();
      await password(passwordClient, { username: other.username, password: other.password, scope: 'notes:read' });
      const rows = await app.dataSource.query<{ scope: string }[]>(
        `SELECT c.scope FROM consents c JOIN users u ON u.id = c.user_id WHERE u.username = '${other.username}' AND c.client_id = '${passwordClient.clientId}'`,
      );
      expect(rows).toEqual([{ scope: 'notes:read' }]);
    });
  });

  describe('error responses (RFC 6749 §5.2)', () => {
    it.each<[string, string, () => Record<string, string>]>([
      ['missing username', 'invalid_request', () => ({ password: user.password })],
      ['an empty username (§3.2: empty means omitted)', 'invalid_request', () => ({ username: '', password: user.password })],
      ['a blank username', 'invalid_request', () => ({ username: '   ', password: user.password })],
      ['missing password', 'invalid_request', () => ({ username: user.username })],
      ['an empty password', 'invalid_request', () => ({ username: user.username, password: '' })],
      ['an overlong password', 'invalid_request', () => ({ username: user.username, password: 'x'.repeat(513) })],
      ['a scope the client is not registered for', 'invalid_scope', () => ({ username: user.username, password: user.password, scope: 'photos:read' })],
      ['a client-only scope no person can grant', 'invalid_scope', () => ({ username: user.username, password: user.password, scope: 'tokens:introspect' })],
      ['a malformed scope', 'invalid_scope', () => ({ username: user.username, password: user.password, scope: 'notes:read  notes:write' })],
    ])('%s → %s, no token issued', async (_case, error, params) => {
      const before = await tokenCount(passwordClient.clientId);
      expectTokenError(await password(passwordClient, params()), 400, error);
      expect(await tokenCount(passwordClient.clientId)).toBe(before);
    });

    it.each(['username', 'password', 'grant_type', 'scope'])('a repeated %s → invalid_request (§3.2)', async (name) => {
      const params = new URLSearchParams({ grant_type: 'password', username: user.username, password: user.password, scope: 'notes:read' });
      params.append(name, params.get(name)!);
      expectTokenError(await postRawToken(app, params.toString(), passwordClient), 400, 'invalid_request');
    });

    it('a wrong password and an unknown username get the same invalid_grant, and both cost a password hash', async () => {
      const victim = await app.createUser();
      const timed = async (params: Record<string, string>): Promise<{ ms: number; reply: TokenResult }> => {
        const start = performance.now();
        const reply = await password(passwordClient, params);
        return { ms: performance.now() - start, reply };
      };
      const wrong = [];
      const unknown = [];
      for (let i = 0; i < 2; i++) {
        wrong.push(await timed({ username: victim.username, password: `wrong password ${i}` }));
        unknown.push(await timed({ username: `nobody_${i}_${victim.username}`, password: 'whatever it is' }));
      }
      for (const { reply } of [...wrong, ...unknown]) {
        expectTokenError(reply, 400, 'invalid_grant');
        expect(reply.body.error_description).toBe(wrong[0].reply.body.error_description);
      }
      // Without the decoy hash an unknown username would answer in about a millisecond, a wrong
      // password after an argon2id verification (tens of ms): the fastest of each stays comparable.
      const fastest = (runs: { ms: number }[]) => Math.min(...runs.map((r) => r.ms));
      expect(fastest(unknown)).toBeGreaterThan(fastest(wrong) * 0.3);
    });
  });

  describe('brute-force protection: the sign-in form\'s counters (RFC 6749 §4.3.2, RFC 6819 §5.1.4.2.3)', () => {
    async function failUntilLocked(username: string): Promise<TokenResult> {
      for (let i = 0; i < FREE_FAILURES; i++) {
        expectTokenError(await password(passwordClient, { username, password: `guess number ${i}` }), 400, 'invalid_grant');
      }
      return password(passwordClient, { username, password: 'one guess too many' });
    }

    it(`after ${FREE_FAILURES} failures, 429 too_many_requests with Retry-After, and even the right password waits`, async () => {
      const target = await app.createUser();
      const locked = await failUntilLocked(target.username);
      expect({ status: locked.status, error: locked.body.error }).toEqual({ status: 429, error: 'too_many_requests' });
      expect(Number(locked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(locked.headers.get('cache-control')).toBe('no-store');
      const right = await password(passwordClient, { username: target.username, password: target.password });
      expect(right.status).toBe(429);
      expect(right.body).not.toHaveProperty('access_token');
    });

    it('counts per username: another user from the same address still gets a token', async () => {
      const target = await app.createUser();
      await failUntilLocked(target.username);
      const bystander = await app.createUser();
      expect((await password(passwordClient, { username: bystander.username, password: bystander.password })).status).toBe(200);
    });

    it('a lock-out earned at /token applies to the sign-in form', async () => {
      const target = await app.createUser();
      expect((await failUntilLocked(target.username)).status).toBe(429);
      const browser = new Browser(app.baseUrl);
      const form = await browser.get('/login');
      const page = await browser.submit(form, '/login', { username: target.username, password: target.password });
      expect(page.status).toBe(429);
      expect(page.headers.get('retry-after')).not.toBeNull();
    });

    it('a lock-out earned at the sign-in form applies to /token', async () => {
      const target = await app.createUser();
      const browser = new Browser(app.baseUrl);
      for (let i = 0; i < FREE_FAILURES; i++) {
        const form = await browser.get('/login');
        expect((await browser.submit(form, '/login', { username: target.username, password: `guess number ${i}` })).status).toBe(401);
      }
      const reply = await password(passwordClient, { username: target.username, password: target.password });
      expect({ status: reply.status, error: reply.body.error }).toEqual({ status: 429, error: 'too_many_requests' });
    });

    it('a success before the limit forgets the failures of that username', async () => {
      const target = await app.createUser();
      for (let i = 0; i < FREE_FAILURES - 1; i++) await password(passwordClient, { username: target.username, password: `guess number ${i}` });
      expect((await password(passwordClient, { username: target.username, password: target.password })).status).toBe(200);
      for (let i = 0; i < FREE_FAILURES - 1; i++) {
        expectTokenError(await password(passwordClient, { username: target.username, password: `guess again ${i}` }), 400, 'invalid_grant');
      }
      expect((await password(passwordClient, { username: target.username, password: target.password })).status).toBe(200);
    });
  });
});

describe('password grant with PASSWORD_GRANT_REFRESH_TOKENS=true', () => {
  it('returns a refresh token to a client also registered for refresh_token, and none to one that is not', async () => {
    await withEnv({ PASSWORD_GRANT_REFRESH_TOKENS: 'true' }, async () => {
      const app = await TestApp.start();
      try {
        const withRefresh = await app.createClient({ name: 'With refresh', redirectUris: [], scope: 'notes:read', grantTypes: ['password', 'refresh_token'] });
        const without = await app.createClient({ name: 'Without refresh', redirectUris: [], scope: 'notes:read', grantTypes: ['password'] });
        const user = await app.createUser();

        const first = await tokenRequest(app, withRefresh, { grant_type: 'password', username: user.username, password: user.password });
        expect(first.body).toEqual({ access_token: expect.stringMatching(/^lk_at_/), token_type: 'bearer', expires_in: 3600, refresh_token: expect.stringMatching(/^lk_rt_/), scope: 'notes:read' });
        const refreshed = await tokenRequest(app, withRefresh, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token as string });
        expect({ status: refreshed.status, rotated: refreshed.body.refresh_token !== first.body.refresh_token }).toEqual({ status: 200, rotated: true });

        const other = await tokenRequest(app, without, { grant_type: 'password', username: user.username, password: user.password });
        expect(other.status).toBe(200);
        expect(other.body).not.toHaveProperty('refresh_token');
      } finally {
        await app.stop();
      }
    });
  });
});
