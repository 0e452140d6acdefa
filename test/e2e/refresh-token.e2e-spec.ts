import { jest } from '@jest/globals';
import { createHash } from 'node:crypto';
import { Token } from '../../src/tokens/token.entity.js';
import { Browser } from '../helpers/browser.js';
import { authorizeAsUser, authorizeUrl, basicAuth, newPkce, postToken, redirectParams } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type RegisteredClientWithMethod, type TestUser } from '../helpers/test-app.js';
import { expectTokenError, expectTokenSuccess } from '../helpers/token-assertions.js';

const ACCESS_TOKEN_TTL_SECONDS = 900;
const REFRESH_TOKEN_TTL_SECONDS = 3600;

interface TokenReply {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

interface Tokens {
  accessToken: string;
  refreshToken: string;
  scope: string;
}

function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

function expectError(reply: TokenReply, status: number, error: string): void {
  expectTokenError(reply, status, error);
}

describe('refresh token grant (RFC 6749 §6, RFC 9700 §4.14)', () => {
  let app: TestApp;
  let user: TestUser;
  let browser: Browser;
  let client: RegisteredClient;
  let other: RegisteredClient;
  let publicClient: RegisteredClient;

  /** Client authentication as each kind of client uses it: Basic, or client_id for a public client. */
  function authOf(c: RegisteredClientWithMethod): { form: Record<string, string>; headers: Record<string, string> } {
    if (c.clientSecret && c.tokenEndpointAuthMethod === 'client_secret_post') return { form: { client_id: c.clientId, client_secret: c.clientSecret }, headers: {} };
    return c.clientSecret ? { form: {}, headers: { authorization: basicAuth(c.clientId, c.clientSecret) } } : { form: { client_id: c.clientId }, headers: {} };
  }

  /** Tokens from the real authorization code flow (one logged-in browser; consent is remembered). */
  async function tokensFor(c: RegisteredClient, scope = 'notes:read notes:write'): Promise<Tokens> {
    const pkce = newPkce();
    const page = await authorizeAsUser(browser, user, authorizeUrl(c, { scope, state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256' }));
    const code = redirectParams(page).get('code')!;
    const auth = authOf(c);
    const reply = await postToken(app, { grant_type: 'authorization_code', code, redirect_uri: c.redirectUri, code_verifier: pkce.verifier, ...auth.form }, auth.headers);
    if (reply.status !== 200) throw new Error(`Token request failed with ${reply.status}: ${JSON.stringify(reply.body)}`);
    return { accessToken: reply.body.access_token as string, refreshToken: reply.body.refresh_token as string, scope: reply.body.scope as string };
  }

  function refresh(c: RegisteredClient, refreshToken: string, extra: Record<string, string> = {}): Promise<TokenReply> {
    const auth = authOf(c);
    return postToken(app, { grant_type: 'refresh_token', refresh_token: refreshToken, ...auth.form, ...extra }, auth.headers);
  }

  function stored(value: string): Promise<Token> {
    return app.dataSource.getRepository(Token).findOneByOrFail({ tokenHash: sha256Hex(value) });
  }

  beforeAll(async () => {
    app = await TestApp.start({ ACCESS_TOKEN_TTL_SECONDS: String(ACCESS_TOKEN_TTL_SECONDS), REFRESH_TOKEN_TTL_SECONDS: String(REFRESH_TOKEN_TTL_SECONDS) });
    user = await app.createUser();
    browser = new Browser(app.baseUrl);
    client = await app.createClient();
    other = await app.createClient({ redirectUris: ['http://localhost:9090/cb'] });
    publicClient = await app.createClient({ isPublic: true, redirectUris: ['http://127.0.0.1:7000/cb'] });
  });
  afterAll(async () => app?.stop());
  afterEach(() => jest.restoreAllMocks());

  describe('rotation', () => {
    it('returns a new access token and a new refresh token, with the no-store headers', async () => {
      const first = await tokensFor(client);
      const reply = await refresh(client, first.refreshToken);
      expectTokenSuccess(reply, { expiresIn: ACCESS_TOKEN_TTL_SECONDS, scope: 'notes:read notes:write' });
      expect(reply.body.access_token).not.toBe(first.accessToken);
      expect(reply.body.refresh_token).not.toBe(first.refreshToken);
      // The new tokens are stored (as hashes) in the same family as the old ones.
      const [old, next] = await Promise.all([stored(first.refreshToken), stored(reply.body.refresh_token as string)]);
      expect(next.familyId).toBe(old.familyId);
      expect(old.consumedAt).toBeInstanceOf(Date);
      expect(next).toMatchObject({ kind: 'refresh', consumedAt: null, revokedAt: null });
    });

    it('kills the old refresh token: presenting it again is invalid_grant', async () => {
      const first = await tokensFor(client);
      expect((await refresh(client, first.refreshToken)).status).toBe(200);
      expectError(await refresh(client, first.refreshToken), 400, 'invalid_grant');
    });

    it('with REFRESH_REUSE_GRACE_SECONDS=0 (set for these tests by test/setup/env.ts) keeps no successor: an immediate repeat is reuse', async () => {
      expect(process.env.REFRESH_REUSE_GRACE_SECONDS).toBe('0');
      const first = await tokensFor(client);
      const rotated = await refresh(client, first.refreshToken);
      expect((await stored(first.refreshToken)).successor).toBeNull();
      expectError(await refresh(client, first.refreshToken), 400, 'invalid_grant');
      expect((await stored(rotated.body.refresh_token as string)).revokedAt).toBeInstanceOf(Date);
    });

    it('keeps rotating along a chain of refreshes', async () => {
      let current = (await tokensFor(client)).refreshToken;
      const seen = new Set([current]);
      for (let i = 0; i < 3; i += 1) {
        const reply = await refresh(client, current);
        expect(reply.status).toBe(200);
        current = reply.body.refresh_token as string;
        expect(seen.has(current)).toBe(false);
        seen.add(current);
      }
    });

    it('revokes the whole family when a rotated refresh token is reused: the newest one dies too', async () => {
      const first = await tokensFor(client);
      const second = await refresh(client, first.refreshToken);
      expect(second.status).toBe(200);
      const third = await refresh(client, second.body.refresh_token as string);
      expect(third.status).toBe(200);
      const newest = third.body.refresh_token as string;

      // An attacker (or a confused client) replays the first, already rotated, refresh token.
      expectError(await refresh(client, first.refreshToken), 400, 'invalid_grant');

      expectError(await refresh(client, newest), 400, 'invalid_grant');
      const family = await app.dataSource.getRepository(Token).findBy({ familyId: (await stored(first.refreshToken)).familyId });
      expect(family).toHaveLength(6); // access + refresh from the code, then from each of two refreshes
      expect(family.filter((t) => t.revokedAt === null)).toEqual([]);
      expect((await stored(third.body.access_token as string)).revokedAt).toBeInstanceOf(Date);
    });

    it('treats a rotated refresh token as reused whatever else the request asks (a widened scope too)', async () => {
      const first = await tokensFor(client, 'notes:read');
      const second = await refresh(client, first.refreshToken);
      expect(second.status).toBe(200);
      // RFC 9700 §4.14.2: the presentation of an invalidated refresh token is the breach signal.
      expectError(await refresh(client, first.refreshToken, { scope: 'notes:read notes:write' }), 400, 'invalid_grant');
      expectError(await refresh(client, second.body.refresh_token as string), 400, 'invalid_grant');
    });

    it('leaves other families alone when one family is revoked', async () => {
      const victim = await tokensFor(client);
      const bystander = await tokensFor(client);
      expect((await refresh(client, victim.refreshToken)).status).toBe(200);
      expectError(await refresh(client, victim.refreshToken), 400, 'invalid_grant');
      expect((await refresh(client, bystander.refreshToken)).status).toBe(200);
    });

    it('lets exactly one of many parallel uses of a refresh token succeed', async () => {
      const { refreshToken } = await tokensFor(client);
      const replies = await Promise.all(Array.from({ length: 8 }, () => refresh(client, refreshToken)));
      const statuses = replies.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 400, 400, 400, 400, 400, 400, 400]);
      for (const reply of replies.filter((r) => r.status !== 200)) expectError(reply, 400, 'invalid_grant');
    });

    it('refuses an access token presented as a refresh token', async () => {
      const { accessToken } = await tokensFor(client);
      expectError(await refresh(client, accessToken), 400, 'invalid_grant');
    });

    it.each([
      ['an unknown refresh token', 'lk_rt_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
      ['a garbage refresh token', 'not a token at all'],
    ])('refuses %s with invalid_grant', async (_name, value) => {
      expectError(await refresh(client, value), 400, 'invalid_grant');
    });

    it.each([
      ['a missing refresh_token', {}],
      ['an empty refresh_token', { refresh_token: '' }],
    ])('refuses %s with invalid_request', async (_name, form: Record<string, string>) => {
      const auth = authOf(client);
      expectError(await postToken(app, { grant_type: 'refresh_token', ...form }, auth.headers), 400, 'invalid_request');
    });
  });

  describe('scope (RFC 6749 §6)', () => {
    it('keeps the original scope when scope is omitted', async () => {
      const first = await tokensFor(client, 'notes:read notes:write');
      const reply = await refresh(client, first.refreshToken);
      expect(reply.status).toBe(200);
      expect(reply.body.scope).toBe('notes:read notes:write');
      expect((await stored(reply.body.access_token as string)).scope).toBe('notes:read notes:write');
    });

    it('allows narrowing; the new refresh token still carries the original grant', async () => {
      const first = await tokensFor(client, 'notes:read notes:write');
      const narrowed = await refresh(client, first.refreshToken, { scope: 'notes:read' });
      expect(narrowed.status).toBe(200);
      expect(narrowed.body.scope).toBe('notes:read');
      expect((await stored(narrowed.body.access_token as string)).scope).toBe('notes:read');
      // RFC 6749 §6: omitted scope means the scope originally granted by the resource owner.
      const again = await refresh(client, narrowed.body.refresh_token as string);
      expect(again.status).toBe(200);
      expect(again.body.scope).toBe('notes:read notes:write');
    });

    it.each([
      ['a scope beyond the original grant', 'notes:read', 'notes:read notes:write'],
      ['a scope the client may never have', 'notes:read notes:write', 'notes:read admin'],
      ['a malformed scope', 'notes:read notes:write', 'notes:read  notes:write'],
      ['a scope with a forbidden character', 'notes:read notes:write', 'notes:"read"'],
    ])('refuses %s with invalid_scope, and the refresh token keeps working', async (_name, granted, requested) => {
      const first = await tokensFor(client, granted);
      expectError(await refresh(client, first.refreshToken, { scope: requested }), 400, 'invalid_scope');
      const reply = await refresh(client, first.refreshToken);
      expect(reply.status).toBe(200);
      expect(reply.body.scope).toBe(granted);
    });
  });

  describe('binding and expiry', () => {
    it('refuses the refresh token of another client with invalid_grant', async () => {
      const mine = await tokensFor(client);
      expectError(await refresh(other, mine.refreshToken), 400, 'invalid_grant');
      expectError(await refresh(publicClient, mine.refreshToken), 400, 'invalid_grant');
    });

    it('refuses an expired refresh token (REFRESH_TOKEN_TTL_SECONDS) with invalid_grant, and accepts one just before', async () => {
      const start = Date.now();
      jest.spyOn(app.clock, 'now').mockReturnValue(new Date(start));
      const early = await tokensFor(client);
      const late = await tokensFor(client);
      jest.spyOn(app.clock, 'now').mockReturnValue(new Date(start + (REFRESH_TOKEN_TTL_SECONDS - 5) * 1000));
      expect((await refresh(client, early.refreshToken)).status).toBe(200);
      jest.spyOn(app.clock, 'now').mockReturnValue(new Date(start + (REFRESH_TOKEN_TTL_SECONDS + 1) * 1000));
      expectError(await refresh(client, late.refreshToken), 400, 'invalid_grant');
    });

    it('gives the rotated refresh token a fresh lifetime from the time of the refresh', async () => {
      const start = Math.floor(Date.now() / 1000) * 1000;
      jest.spyOn(app.clock, 'now').mockReturnValue(new Date(start));
      const first = await tokensFor(client);
      const later = start + 600_000;
      jest.spyOn(app.clock, 'now').mockReturnValue(new Date(later));
      const reply = await refresh(client, first.refreshToken);
      expect(reply.status).toBe(200);
      expect((await stored(reply.body.access_token as string)).expiresAt.getTime()).toBe(later + ACCESS_TOKEN_TTL_SECONDS * 1000);
      expect((await stored(reply.body.refresh_token as string)).expiresAt.getTime()).toBe(later + REFRESH_TOKEN_TTL_SECONDS * 1000);
    });
  });

  describe('public clients', () => {
    it('refresh with client_id only ("none") and rotate like confidential clients', async () => {
      const first = await tokensFor(publicClient, 'notes:read');
      const reply = await refresh(publicClient, first.refreshToken);
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({
        access_token: expect.stringMatching(/^lk_at_/),
        token_type: 'bearer',
        expires_in: ACCESS_TOKEN_TTL_SECONDS,
        refresh_token: expect.stringMatching(/^lk_rt_/),
        scope: 'notes:read',
      });
      expectError(await refresh(publicClient, first.refreshToken), 400, 'invalid_grant');
      // The reuse revoked the family, including the token just issued.
      expectError(await refresh(publicClient, reply.body.refresh_token as string), 400, 'invalid_grant');
    });

    it('must name themselves: a refresh request without client authentication is invalid_client', async () => {
      const first = await tokensFor(publicClient, 'notes:read');
      const reply = await postToken(app, { grant_type: 'refresh_token', refresh_token: first.refreshToken });
      expectError(reply, 401, 'invalid_client');
      expect(reply.headers.get('www-authenticate')).toMatch(/^Basic realm="[^"]+"/);
      expect((await refresh(publicClient, first.refreshToken)).status).toBe(200);
    });
  });

  it('accepts client_secret_post for a refresh, from a client registered for it', async () => {
    const postClient = await app.createClient({ tokenEndpointAuthMethod: 'client_secret_post' });
    const first = await tokensFor(postClient);
    const reply = await postToken(app, { grant_type: 'refresh_token', refresh_token: first.refreshToken, client_id: postClient.clientId, client_secret: postClient.clientSecret! });
    expect(reply.status).toBe(200);
  });
});
