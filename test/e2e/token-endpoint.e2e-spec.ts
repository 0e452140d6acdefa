import { jest } from '@jest/globals';
import { createHash } from 'node:crypto';
import { Client } from '../../src/clients/client.entity.js';
import { hashSecret } from '../../src/common/secrets.js';
import { Token } from '../../src/tokens/token.entity.js';
import { Browser } from '../helpers/browser.js';
import { authorizeAsUser, authorizeUrl, basicAuth, newPkce, type Pkce, postToken, redirectParams } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';
import { expectTokenError, expectTokenSuccess } from '../helpers/token-assertions.js';

/** Non-default lifetimes, so that the stored expiries can only come from the configuration. */
const ACCESS_TOKEN_TTL_SECONDS = 1200;
const REFRESH_TOKEN_TTL_SECONDS = 7200;
const CODE_TTL_SECONDS = 120;
const BASIC_CHALLENGE = /^Basic realm="[^"]+"/;

interface TokenReply {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

function basicOf(client: RegisteredClient): Record<string, string> {
  return { authorization: basicAuth(client.clientId, client.clientSecret!) };
}

function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** Every character percent-encoded: legal application/x-www-form-urlencoded that a conformant server must decode. */
function percentEncodeAll(value: string): string {
  return [...Buffer.from(value, 'utf8')].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
}

function expectError(reply: TokenReply, status: number, error: string): void {
  expectTokenError(reply, status, error);
  expect(reply.body).not.toHaveProperty('access_token');
}

function expectInvalidClient(reply: TokenReply): void {
  expectError(reply, 401, 'invalid_client');
  expect(reply.headers.get('www-authenticate')).toMatch(BASIC_CHALLENGE);
}

describe('token endpoint (RFC 6749 §3.2, §4.1.3, §5)', () => {
  let app: TestApp;
  let user: TestUser;
  let browser: Browser;
  /** Confidential, registered for authorization_code and refresh_token, two redirect URIs. */
  let confidential: RegisteredClient;
  let secondRedirectUri: string;
  /** Confidential, one redirect URI. */
  let other: RegisteredClient;
  let publicClient: RegisteredClient;
  /** Confidential, registered for authorization_code only. */
  let codeOnly: RegisteredClient;

  /** An authorization code from the real flow, with PKCE unless `code_challenge: undefined` is passed. */
  async function codeFor(client: RegisteredClient, params: Record<string, string | undefined> = {}): Promise<{ code: string; pkce: Pkce }> {
    const pkce = newPkce();
    const page = await authorizeAsUser(
      browser,
      user,
      authorizeUrl(client, { scope: 'notes:read', state: 'xyz', code_challenge: pkce.challenge, code_challenge_method: 'S256', ...params }),
    );
    const code = redirectParams(page).get('code');
    if (!code) throw new Error(`No code in ${page.location}`);
    return { code, pkce };
  }

  /** Redeems a fresh code of `client` (Basic authentication for confidential clients, client_id for public ones). */
  async function redeem(client: RegisteredClient, scope = 'notes:read'): Promise<TokenReply> {
    const { code, pkce } = await codeFor(client, { scope });
    const form = { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier };
    return client.clientSecret ? postToken(app, form, basicOf(client)) : postToken(app, { ...form, client_id: client.clientId });
  }

  beforeAll(async () => {
    app = await TestApp.start({
      ACCESS_TOKEN_TTL_SECONDS: String(ACCESS_TOKEN_TTL_SECONDS),
      REFRESH_TOKEN_TTL_SECONDS: String(REFRESH_TOKEN_TTL_SECONDS),
      CODE_TTL_SECONDS: String(CODE_TTL_SECONDS),
    });
    user = await app.createUser();
    browser = new Browser(app.baseUrl);
    secondRedirectUri = 'https://app.example.com/oauth/callback';
    confidential = await app.createClient({ redirectUris: ['http://localhost:8080/callback', secondRedirectUri] });
    other = await app.createClient({ redirectUris: ['http://localhost:9090/cb'] });
    publicClient = await app.createClient({ isPublic: true, redirectUris: ['http://127.0.0.1:7000/cb'] });
    codeOnly = await app.createClient({ grantTypes: ['authorization_code'], redirectUris: ['http://localhost:8081/cb'] });
  });
  afterAll(async () => app?.stop());
  afterEach(() => jest.restoreAllMocks());

  describe('successful response (RFC 6749 §5.1)', () => {
    it('is exactly {access_token, token_type, expires_in, refresh_token, scope} with no-store headers', async () => {
      const reply = await redeem(confidential, 'notes:read notes:write');
      expectTokenSuccess(reply, { expiresIn: ACCESS_TOKEN_TTL_SECONDS, scope: 'notes:read notes:write' });
      expect(reply.body.access_token).not.toBe(reply.body.refresh_token);
    });

    it('sends no refresh token to a client that is not registered for the refresh_token grant', async () => {
      const reply = await redeem(codeOnly);
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({ access_token: expect.stringMatching(/^lk_at_/), token_type: 'bearer', expires_in: ACCESS_TOKEN_TTL_SECONDS, scope: 'notes:read' });
    });

    it('marks error responses as not cacheable too', async () => {
      const reply = await postToken(app, { grant_type: 'authorization_code', code: 'lk_ac_unknown' }, basicOf(confidential));
      expectError(reply, 400, 'invalid_grant');
      expect(reply.headers.get('cache-control')).toBe('no-store');
      expect(reply.headers.get('pragma')).toBe('no-cache');
    });
  });

  describe('token storage', () => {
    it('stores only SHA-256 hashes, with expiries of ACCESS_TOKEN_TTL_SECONDS and REFRESH_TOKEN_TTL_SECONDS', async () => {
      const now = new Date(Math.floor(Date.now() / 1000) * 1000);
      jest.spyOn(app.clock, 'now').mockReturnValue(now);
      const reply = await redeem(confidential);
      expect(reply.status).toBe(200);
      const accessToken = reply.body.access_token as string;
      const refreshToken = reply.body.refresh_token as string;

      const tokens = app.dataSource.getRepository(Token);
      const access = await tokens.findOneByOrFail({ tokenHash: sha256Hex(accessToken) });
      const refresh = await tokens.findOneByOrFail({ tokenHash: sha256Hex(refreshToken) });
      expect(access).toMatchObject({ kind: 'access', clientId: confidential.clientId, scope: 'notes:read', revokedAt: null });
      expect(refresh).toMatchObject({ kind: 'refresh', clientId: confidential.clientId, scope: 'notes:read', revokedAt: null, consumedAt: null });
      expect(access.familyId).toBe(refresh.familyId);
      expect(access.expiresAt.getTime() - now.getTime()).toBe(ACCESS_TOKEN_TTL_SECONDS * 1000);
      expect(refresh.expiresAt.getTime() - now.getTime()).toBe(REFRESH_TOKEN_TTL_SECONDS * 1000);

      // No column of any row holds a token value or its random part.
      const rows = JSON.stringify(await tokens.createQueryBuilder('t').select('*').getRawMany());
      for (const value of [accessToken, refreshToken, accessToken.slice(6), refreshToken.slice(6)]) expect(rows).not.toContain(value);
    });

    it('stores the authorization code only as a hash', async () => {
      const { code } = await codeFor(confidential);
      const rows = JSON.stringify(await app.dataSource.createQueryBuilder().select('*').from('authorization_codes', 'c').getRawMany());
      expect(rows).toContain(sha256Hex(code));
      expect(rows).not.toContain(code);
      expect(rows).not.toContain(code.slice(6));
    });
  });

  describe('client authentication (RFC 6749 §2.3)', () => {
    it('accepts client_secret_basic', async () => {
      expect((await redeem(confidential)).status).toBe(200);
    });

    it('form-urlencodes the id and secret before base64 (§2.3.1): every character percent-encoded still authenticates', async () => {
      const { code, pkce } = await codeFor(other);
      const authorization = `Basic ${Buffer.from(`${percentEncodeAll(other.clientId)}:${percentEncodeAll(other.clientSecret!)}`).toString('base64')}`;
      const reply = await postToken(app, { grant_type: 'authorization_code', code, redirect_uri: other.redirectUri, code_verifier: pkce.verifier }, { authorization });
      expect(reply.status).toBe(200);
    });

    it('decodes a secret that contains characters form-urlencoding changes (":", "+", space, "%", non-ASCII)', async () => {
      // Secrets are server-generated base64url; this fixture gives one client a secret that must be
      // encoded, to check the decoding path of §2.3.1 ('+' is a space, "%2B" is '+').
      const client = await app.createClient({ redirectUris: ['http://localhost:8082/cb'] });
      const secret = 'p:a+s s%20w/ö=rd&';
      await app.dataSource.getRepository(Client).update({ id: client.clientId }, { secretHash: hashSecret(secret) });
      const weird: RegisteredClient = { ...client, clientSecret: secret };

      const { code, pkce } = await codeFor(weird);
      const form = { grant_type: 'authorization_code', code, redirect_uri: weird.redirectUri, code_verifier: pkce.verifier };
      const reply = await postToken(app, form, basicOf(weird));
      expect(reply.status).toBe(200);
      // The same secret, sent in the body by a client registered for that, is form-urlencoded by the form itself.
      const postClient = await app.createClient({ redirectUris: [weird.redirectUri], tokenEndpointAuthMethod: 'client_secret_post' });
      await app.dataSource.getRepository(Client).update({ id: postClient.clientId }, { secretHash: hashSecret(secret) });
      const viaPost = await codeFor({ ...postClient, clientSecret: secret });
      const posted = await postToken(app, { ...form, code: viaPost.code, code_verifier: viaPost.pkce.verifier, client_id: postClient.clientId, client_secret: secret });
      expect(posted.status).toBe(200);
    });

    it('accepts client_secret_post from a client registered for it', async () => {
      const postClient = await app.createClient({ redirectUris: ['http://localhost:8084/cb'], tokenEndpointAuthMethod: 'client_secret_post' });
      const { code, pkce } = await codeFor(postClient);
      const reply = await postToken(app, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: postClient.redirectUri,
        code_verifier: pkce.verifier,
        client_id: postClient.clientId,
        client_secret: postClient.clientSecret!,
      });
      expect(reply.status).toBe(200);
    });

    it('accepts a Basic-authenticated client that also names itself with a matching client_id', async () => {
      const { code, pkce } = await codeFor(confidential);
      const form = { grant_type: 'authorization_code', code, redirect_uri: confidential.redirectUri, code_verifier: pkce.verifier, client_id: confidential.clientId };
      expect((await postToken(app, form, basicOf(confidential))).status).toBe(200);
    });

    it('accepts "none" for a public client that proves possession with PKCE', async () => {
      const reply = await redeem(publicClient);
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({
        access_token: expect.stringMatching(/^lk_at_/),
        token_type: 'bearer',
        expires_in: ACCESS_TOKEN_TTL_SECONDS,
        refresh_token: expect.stringMatching(/^lk_rt_/),
        scope: 'notes:read',
      });
    });

    const garbage: Array<[string, () => string]> = [
      ['a wrong secret', () => basicAuth(confidential.clientId, `${confidential.clientSecret}x`)],
      ['an unknown client', () => basicAuth('no-such-client', 'lk_cs_whatever')],
      ['another client’s secret', () => basicAuth(confidential.clientId, other.clientSecret!)],
      ['Basic without a colon', () => `Basic ${Buffer.from(confidential.clientId).toString('base64')}`],
      ['Basic with an empty secret', () => `Basic ${Buffer.from(`${confidential.clientId}:`).toString('base64')}`],
      ['Basic with only a colon', () => `Basic ${Buffer.from(':').toString('base64')}`],
      ['Basic with no credentials', () => 'Basic'],
      ['Basic with non-base64 credentials', () => 'Basic !!!*** not base64 ***'],
      ['Basic with a malformed percent-escape', () => `Basic ${Buffer.from(`${confidential.clientId}:%E0%A4%A`).toString('base64')}`],
      ['Basic with a NUL in the client id', () => `Basic ${Buffer.from(`%00${confidential.clientId}:secret`).toString('base64')}`],
      ['Basic with a 10 kB client id', () => basicAuth('x'.repeat(10_000), 'secret')],
      ['the Bearer scheme', () => `Bearer ${confidential.clientSecret}`],
      ['an unknown scheme', () => 'Digest username="x"'],
      ['a bare word', () => 'garbage'],
    ];
    it.each(garbage)('answers %s with 401 invalid_client and a Basic challenge', async (_name, header) => {
      const { code, pkce } = await codeFor(confidential);
      const reply = await postToken(app, { grant_type: 'authorization_code', code, redirect_uri: confidential.redirectUri, code_verifier: pkce.verifier }, { authorization: header() });
      expectInvalidClient(reply);
      // Authentication failed before the code was looked at: its owner can still redeem it.
      expect((await postToken(app, { grant_type: 'authorization_code', code, redirect_uri: confidential.redirectUri, code_verifier: pkce.verifier }, basicOf(confidential))).status).toBe(200);
    });

    const bodyFailures: Array<[string, () => Record<string, string>]> = [
      ['client_secret_post with a wrong secret', () => ({ client_id: confidential.clientId, client_secret: 'lk_cs_wrong' })],
      ['client_secret_post for an unknown client', () => ({ client_id: 'no-such-client', client_secret: 'lk_cs_wrong' })],
      ['client_secret without client_id', () => ({ client_secret: confidential.clientSecret! })],
      ['no authentication at all', () => ({})],
      ['only the client_id of a confidential client', () => ({ client_id: confidential.clientId })],
      ['only an unknown client_id', () => ({ client_id: 'no-such-client' })],
      ['a public client sending a client_secret', () => ({ client_id: publicClient.clientId, client_secret: 'anything' })],
      ['a public client sending an empty-looking secret', () => ({ client_id: publicClient.clientId, client_secret: ' ' })],
    ];
    it.each(bodyFailures)('answers %s with 401 invalid_client', async (_name, auth) => {
      const reply = await postToken(app, { grant_type: 'authorization_code', code: 'lk_ac_irrelevant', ...auth() });
      expectInvalidClient(reply);
    });

    it('treats an empty client_secret as omitted (§3.2): a public client sending client_secret= uses "none"', async () => {
      const { code, pkce } = await codeFor(publicClient);
      const reply = await postToken(app, { grant_type: 'authorization_code', code, redirect_uri: publicClient.redirectUri, code_verifier: pkce.verifier, client_id: publicClient.clientId, client_secret: '' });
      expect(reply.status).toBe(200);
    });

    it('treats an empty client_secret as omitted next to HTTP Basic (one method, not two)', async () => {
      const { code, pkce } = await codeFor(confidential);
      const form = { grant_type: 'authorization_code', code, redirect_uri: confidential.redirectUri, code_verifier: pkce.verifier, client_secret: '' };
      expect((await postToken(app, form, basicOf(confidential))).status).toBe(200);
    });

    it('refuses a public client authenticating with HTTP Basic (it has no secret)', async () => {
      const reply = await postToken(app, { grant_type: 'authorization_code', code: 'lk_ac_irrelevant' }, { authorization: basicAuth(publicClient.clientId, 'anything') });
      expectInvalidClient(reply);
    });

    it('refuses two authentication methods in one request with invalid_request (§2.3)', async () => {
      const { code, pkce } = await codeFor(confidential);
      const reply = await postToken(
        app,
        { grant_type: 'authorization_code', code, redirect_uri: confidential.redirectUri, code_verifier: pkce.verifier, client_id: confidential.clientId, client_secret: confidential.clientSecret! },
        basicOf(confidential),
      );
      expectError(reply, 400, 'invalid_request');
    });

    it('refuses a body client_id that differs from the Basic-authenticated client with invalid_client', async () => {
      const { code, pkce } = await codeFor(confidential);
      const reply = await postToken(
        app,
        { grant_type: 'authorization_code', code, redirect_uri: confidential.redirectUri, code_verifier: pkce.verifier, client_id: other.clientId },
        basicOf(confidential),
      );
      expectInvalidClient(reply);
    });
  });

  describe('error responses (RFC 6749 §5.2)', () => {
    type Case = [string, string, () => Promise<{ form: Record<string, string>; headers: Record<string, string> }>];
    /** A fresh PKCE code of `confidential` and the form that would redeem it. */
    const fresh = async (params: Record<string, string | undefined> = {}) => {
      const { code, pkce } = await codeFor(confidential, params);
      return { code, pkce, form: { grant_type: 'authorization_code', code, redirect_uri: confidential.redirectUri, code_verifier: pkce.verifier } };
    };
    const cases: Case[] = [
      ['missing grant_type', 'invalid_request', async () => ({ form: { code: (await fresh()).code }, headers: basicOf(confidential) })],
      ['an empty grant_type (§3.2: empty means omitted)', 'invalid_request', async () => ({ form: { grant_type: '', code: (await fresh()).code }, headers: basicOf(confidential) })],
      ['an empty code', 'invalid_request', async () => ({ form: { ...(await fresh()).form, code: '' }, headers: basicOf(confidential) })],
      ['an unsupported grant_type (implicit has no token request, RFC 6749 §4.2)', 'unsupported_grant_type', async () => ({ form: { grant_type: 'implicit' }, headers: basicOf(confidential) })],
      ['an unsupported URN grant_type', 'unsupported_grant_type', async () => ({ form: { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: 'x' }, headers: basicOf(confidential) })],
      ['a grant type the client is not registered for', 'unauthorized_client', async () => ({ form: { grant_type: 'refresh_token', refresh_token: 'lk_rt_x' }, headers: basicOf(codeOnly) })],
      ['missing code', 'invalid_request', async () => ({ form: { grant_type: 'authorization_code', redirect_uri: confidential.redirectUri }, headers: basicOf(confidential) })],
      ['an unknown code', 'invalid_grant', async () => ({ form: { ...(await fresh()).form, code: 'lk_ac_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }, headers: basicOf(confidential) })],
      [
        'the code of another client',
        'invalid_grant',
        async () => {
          const { form } = await fresh();
          return { form: { ...form, redirect_uri: confidential.redirectUri }, headers: basicOf(other) };
        },
      ],
      ['a redirect_uri other than the authorization request’s', 'invalid_grant', async () => ({ form: { ...(await fresh()).form, redirect_uri: secondRedirectUri }, headers: basicOf(confidential) })],
      ['a redirect_uri differing by a trailing slash', 'invalid_grant', async () => ({ form: { ...(await fresh()).form, redirect_uri: `${confidential.redirectUri}/` }, headers: basicOf(confidential) })],
      [
        'no redirect_uri when the authorization request had one',
        'invalid_grant',
        async () => {
          const { redirect_uri: _omitted, ...form } = (await fresh()).form;
          return { form, headers: basicOf(confidential) };
        },
      ],
      ['a wrong code_verifier', 'invalid_grant', async () => ({ form: { ...(await fresh()).form, code_verifier: newPkce().verifier }, headers: basicOf(confidential) })],
      [
        'a missing code_verifier',
        'invalid_grant',
        async () => {
          const { code_verifier: _omitted, ...form } = (await fresh()).form;
          return { form, headers: basicOf(confidential) };
        },
      ],
      ['a malformed code_verifier (too short, RFC 7636 §4.1)', 'invalid_request', async () => ({ form: { ...(await fresh()).form, code_verifier: 'short' }, headers: basicOf(confidential) })],
      [
        'a code_verifier for a code issued without code_challenge (PKCE downgrade)',
        'invalid_grant',
        async () => {
          const { form } = await fresh({ code_challenge: undefined, code_challenge_method: undefined });
          return { form: { ...form, code_verifier: newPkce().verifier }, headers: basicOf(confidential) };
        },
      ],
    ];

    it.each(cases)('answers %s with %s', async (_name, error, build) => {
      const { form, headers } = await build();
      const before = await app.dataSource.getRepository(Token).count();
      const reply = await postToken(app, form, headers);
      expectError(reply, 400, error);
      expect(await app.dataSource.getRepository(Token).count()).toBe(before);
    });

    it('redeems a code without redirect_uri when the authorization request had none', async () => {
      const client = await app.createClient({ redirectUris: ['http://localhost:8083/only'] });
      const omitted = await codeFor(client, { redirect_uri: undefined });
      const reply = await postToken(app, { grant_type: 'authorization_code', code: omitted.code, code_verifier: omitted.pkce.verifier }, basicOf(client));
      expect(reply.status).toBe(200);
      // A redirect_uri that is sent anyway must still be the one the code went to.
      const wrong = await codeFor(client, { redirect_uri: undefined });
      const mismatch = await postToken(app, { grant_type: 'authorization_code', code: wrong.code, code_verifier: wrong.pkce.verifier, redirect_uri: 'http://localhost:8083/other' }, basicOf(client));
      expectError(mismatch, 400, 'invalid_grant');
    });

    it('redeems a confidential client’s code issued without PKCE when no code_verifier is sent', async () => {
      const { form } = await fresh({ code_challenge: undefined, code_challenge_method: undefined });
      const { code_verifier: _omitted, ...withoutVerifier } = form;
      expect((await postToken(app, withoutVerifier, basicOf(confidential))).status).toBe(200);
    });

    it('refuses an expired code (CODE_TTL_SECONDS) with invalid_grant, and accepts one just before expiry', async () => {
      const start = Date.now();
      jest.spyOn(app.clock, 'now').mockReturnValue(new Date(start));
      const early = await fresh();
      const late = await fresh();
      jest.spyOn(app.clock, 'now').mockReturnValue(new Date(start + (CODE_TTL_SECONDS - 2) * 1000));
      expect((await postToken(app, early.form, basicOf(confidential))).status).toBe(200);
      jest.spyOn(app.clock, 'now').mockReturnValue(new Date(start + (CODE_TTL_SECONDS + 1) * 1000));
      expectError(await postToken(app, late.form, basicOf(confidential)), 400, 'invalid_grant');
    });

    it('refuses a replayed code with invalid_grant and revokes the tokens of its first redemption (§4.1.2)', async () => {
      const { form } = await fresh();
      const first = await postToken(app, form, basicOf(confidential));
      expect(first.status).toBe(200);
      const accessToken = first.body.access_token as string;
      const refreshToken = first.body.refresh_token as string;

      expectError(await postToken(app, form, basicOf(confidential)), 400, 'invalid_grant');

      const tokens = app.dataSource.getRepository(Token);
      const access = await tokens.findOneByOrFail({ tokenHash: sha256Hex(accessToken) });
      const refresh = await tokens.findOneByOrFail({ tokenHash: sha256Hex(refreshToken) });
      expect(access.revokedAt).toBeInstanceOf(Date);
      expect(refresh.revokedAt).toBeInstanceOf(Date);
      const family = await tokens.findBy({ familyId: access.familyId });
      expect(family.map((t) => t.revokedAt === null)).toEqual(family.map(() => false));

      const refreshed = await postToken(app, { grant_type: 'refresh_token', refresh_token: refreshToken }, basicOf(confidential));
      expectError(refreshed, 400, 'invalid_grant');
    });

    it('refuses a code replayed by another client and still revokes the tokens of the first redemption', async () => {
      // A replay is detected whoever sends it: a stolen code presented by another registered client
      // is refused, and the legitimate redemption's tokens are revoked as well (RFC 6749 §10.5).
      const { form } = await fresh();
      const first = await postToken(app, form, basicOf(confidential));
      expect(first.status).toBe(200);
      expectError(await postToken(app, form, basicOf(other)), 400, 'invalid_grant');
      const access = await app.dataSource.getRepository(Token).findOneByOrFail({ tokenHash: sha256Hex(first.body.access_token as string) });
      expect(access.revokedAt).toBeInstanceOf(Date);
    });
  });
});
