/**
 * Threat: an access token is misused at the resource server (RFC 9700 §4.10, RFC 6819 §4.6.x,
 * RFC 6750 §3.1): replayed after it expired or was revoked, forged by changing a character, swapped
 * for another kind of credential (a refresh token, a code, a client secret, the stored hash), or
 * used beyond its scope. Defences: one lookup by the token's hash for an active access token of a
 * person, with no cache; a 401 invalid_token (or 403 insufficient_scope) challenge per RFC 6750 §3.
 */
import { jest } from '@jest/globals';
import { hashSecret } from '../../src/common/secrets.js';
import { ApiClient, obtainTokens, type ApiResponse } from '../helpers/api-client.js';
import { basicAuth, obtainCode, tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';

const INVALID_TOKEN_CHALLENGE = /^Bearer realm="latchkey", error="invalid_token", error_description="[^"]+"$/;

function expectInvalidToken(response: ApiResponse): void {
  expect({ status: response.status, body: response.json }).toEqual({ status: 401, body: { error: 'invalid_token', error_description: expect.any(String) } });
  expect(response.headers.get('www-authenticate')).toMatch(INVALID_TOKEN_CHALLENGE);
}

/** `token` with the character at `index` replaced by another base64url character. */
function flipAt(token: string, index: number): string {
  const at = index < 0 ? token.length + index : index;
  return token.slice(0, at) + (token[at] === 'A' ? 'B' : 'A') + token.slice(at + 1);
}

describe('access token misuse at the resource server (RFC 6750 §3.1, RFC 9700 §4.10)', () => {
  let app: TestApp;
  let user: TestUser;
  let client: RegisteredClient;

  beforeAll(async () => {
    app = await TestApp.start({ RATE_LIMIT_CLIENT_PER_MINUTE: '0', RATE_LIMIT_API_PER_MINUTE: '0' });
    user = await app.createUser();
    client = await app.createClient({ scope: 'notes:read notes:write photos:read' });
  });
  afterAll(async () => app?.stop());
  afterEach(() => jest.restoreAllMocks());

  const read = (token: string) => new ApiClient(app, token).get('/api/v1/notes');

  describe('RFC 6750 §3.1, RFC 6749 §5.1 expires_in: an expired access token', () => {
    it('is accepted until expires_in has passed and refused with invalid_token after', async () => {
      const start = Date.now();
      const issued = await tokenRequest(app, client, await codeParams());
      expect(issued.status).toBe(200);
      const token = String(issued.body.access_token);
      const expiresIn = Number(issued.body.expires_in);
      expect(expiresIn).toBeGreaterThan(60);

      jest.spyOn(app.clock, 'now').mockReturnValue(new Date(start + (expiresIn - 30) * 1000));
      expect((await read(token)).status).toBe(200);

      jest.spyOn(app.clock, 'now').mockReturnValue(new Date(start + (expiresIn + 30) * 1000));
      expectInvalidToken(await read(token));
    });
  });

  describe('RFC 7009 §2: a revoked access token', () => {
    it('is refused by the very next request', async () => {
      const { accessToken } = await obtainTokens(app, client, user, 'notes:read');
      expect((await read(accessToken)).status).toBe(200);
      const revoked = await fetch(app.url('/revoke'), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(client.clientId, client.clientSecret!) },
        body: new URLSearchParams({ token: accessToken, token_type_hint: 'access_token' }).toString(),
      });
      expect(revoked.status).toBe(200);
      expectInvalidToken(await read(accessToken));
    });
  });

  describe('RFC 6819 §5.1.4.2.2, RFC 9700 §4.10: forged and substituted tokens', () => {
    let accessToken: string;
    let refreshToken: string;

    beforeAll(async () => {
      const tokens = await obtainTokens(app, client, user, 'notes:read');
      accessToken = tokens.accessToken;
      refreshToken = tokens.refreshToken!;
    });

    it('accepts the genuine token (the baseline each forgery is a small change of)', async () => {
      expect((await read(accessToken)).status).toBe(200);
    });

    it.each([
      ['the last character flipped', (t: string) => flipAt(t, -1)],
      ['the first random character flipped', (t: string) => flipAt(t, 'lk_at_'.length)],
      ['a middle character flipped', (t: string) => flipAt(t, 25)],
      ['the last character cut off', (t: string) => t.slice(0, -1)],
      ['a character appended', (t: string) => `${t}A`],
      ['the prefix in upper case', (t: string) => t.replace('lk_at_', 'LK_AT_')],
      ['the prefix of a refresh token', (t: string) => t.replace('lk_at_', 'lk_rt_')],
      ['the random part alone', (t: string) => t.slice('lk_at_'.length)],
      ['its SHA-256 (what the database stores)', (t: string) => hashSecret(t)],
    ])('refuses the access token with %s', async (_name, forge) => {
      const forged = forge(accessToken);
      expect(forged).not.toBe(accessToken);
      expectInvalidToken(await read(forged));
    });

    it('refuses a refresh token presented as an access token', async () => {
      expectInvalidToken(await read(refreshToken));
      // Refused, not consumed: the refresh token still works at /token.
      expect((await tokenRequest(app, client, { grant_type: 'refresh_token', refresh_token: refreshToken })).status).toBe(200);
    });

    it('refuses an authorization code and a client secret presented as access tokens', async () => {
      const { code } = await obtainCode(app, client, user);
      expectInvalidToken(await read(code));
      expectInvalidToken(await read(client.clientSecret!));
    });

    it('refuses the token in the query string, where it would leak into logs (RFC 6750 §2.3, RFC 9700 §2.5)', async () => {
      const response = await new ApiClient(app).get(`/api/v1/notes?access_token=${accessToken}`, { authorization: null });
      expect({ status: response.status, error: (response.json as { error?: string }).error }).toEqual({ status: 400, error: 'invalid_request' });
    });
  });

  describe('RFC 6750 §3.1: a token without the scope the request needs', () => {
    let api: ApiClient;

    beforeAll(async () => {
      api = new ApiClient(app, (await obtainTokens(app, client, user, 'notes:read')).accessToken);
    });

    it.each([
      ['write with a read-only token', () => api.post('/api/v1/notes', { title: 'no' }), 'notes:write'],
      ['read another collection', () => api.get('/api/v1/photos'), 'photos:read'],
      ['write another collection', () => api.post('/api/v1/photos', { url: 'https://example.com/a.png' }), 'photos:write'],
    ])('refuses to %s with 403 insufficient_scope naming the scope needed', async (_name, request, needed) => {
      const refused = await request();
      expect({ status: refused.status, body: refused.json }).toEqual({ status: 403, body: { error: 'insufficient_scope', error_description: expect.any(String) } });
      expect(refused.headers.get('www-authenticate')).toMatch(new RegExp(`^Bearer realm="latchkey", error="insufficient_scope", .*scope="${needed}"$`));
    });
  });

  async function codeParams(): Promise<Record<string, string>> {
    const { code, pkce } = await obtainCode(app, client, user, { scope: 'notes:read' });
    return { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier };
  }
});
