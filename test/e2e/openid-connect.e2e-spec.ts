/**
 * OpenID Connect through a certified relying-party library, unmodified: openid-client (v6).
 * Discovery, the code flow with PKCE and nonce (the library validates the ID token's iss, aud,
 * exp, iat, nonce and, for refresh, sub), the ID token's signature against the published JWKS,
 * and the ID token of a refresh (Core §12.2). Test names follow the OpenID Foundation's Basic OP
 * test modules they mirror (oidcc-server, oidcc-ensure-request-with-nonce, oidcc-refresh-token, …).
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { createHash } from 'node:crypto';
import * as oidc from 'openid-client';
import { ClientsService } from '../../src/clients/clients.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { Browser } from '../helpers/browser.js';
import { authorizeAsUser } from '../helpers/oauth-flow.js';
import type { TestUser } from '../helpers/test-app.js';
import { dropTestDatabase } from '../helpers/test-database.js';

const REDIRECT_URI = 'http://127.0.0.1:9/callback';

describe('OpenID Connect through openid-client', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  let user: TestUser;
  let userId: string;
  let config: oidc.Configuration;
  let clientId: string;

  /** Signs in through the browser and returns the callback URL, as the application receives it. */
  async function authorize(params: Record<string, string>): Promise<URL> {
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT_URI, ...params });
    const page = await authorizeAsUser(new Browser(url.origin), user, url.href);
    if ((page.status !== 302 && page.status !== 303) || !page.location) throw new Error(`Expected a redirect to the client, got ${page.status}:\n${page.body}`);
    return new URL(page.location);
  }

  /** A complete code flow with PKCE, state and nonce; the library checks the ID token. */
  async function signIn(scope = 'openid'): Promise<{ tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers; nonce: string }> {
    const openid = scope.split(' ').includes('openid');
    const verifier = oidc.randomPKCECodeVerifier();
    // A nonce belongs to an authentication request; the library expects an ID token whenever it checks one.
    const nonce = openid ? oidc.randomNonce() : undefined;
    const state = oidc.randomState();
    const callback = await authorize({ scope, state, ...(nonce ? { nonce } : {}), code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state, idTokenExpected: openid });
    return { tokens, nonce: nonce ?? '' };
  }

  beforeAll(async () => {
    ({ nest, issuer } = await startAtIssuer());
    user = { username: `alice_${Date.now().toString(36)}`, password: 'correct horse battery staple' };
    userId = (await nest.get(UsersService).create(user.username, user.password, { email: 'alice@example.com', name: 'Alice Liddell', givenName: 'Alice', familyName: 'Liddell' })).id;
    const { client, secret } = await nest.get(ClientsService).create({ name: 'openid-client', redirectUris: [REDIRECT_URI], scope: 'notes:read', grantTypes: ['authorization_code', 'refresh_token'] as never });
    clientId = client.id;
    config = await oidc.discovery(issuer, client.id, undefined, oidc.ClientSecretBasic(secret!), { execute: [oidc.allowInsecureRequests] });
  });
  afterAll(async () => {
    await nest?.close();
    await dropTestDatabase();
  });

  describe('oidcc-discovery-endpoint-verification', () => {
    it('serves /.well-known/openid-configuration for the issuer, with what an OpenID provider must declare (Discovery §3)', () => {
      const metadata = config.serverMetadata();
      expect(metadata.issuer).toBe(issuer.href.replace(/\/$/, ''));
      expect(metadata.jwks_uri).toBe(`${metadata.issuer}/.well-known/jwks.json`);
      expect(metadata.response_types_supported).toContain('code');
      expect(metadata.subject_types_supported).toEqual(['public', 'pairwise']);
      expect(metadata.id_token_signing_alg_values_supported).toEqual(['RS256', 'ES256', 'EdDSA']);
      expect(metadata.id_token_signing_alg_values_supported).toContain('RS256');
      expect(metadata.scopes_supported).toEqual(expect.arrayContaining(['openid', 'profile', 'email', 'offline_access', 'notes:read']));
      expect(metadata.claims_supported).toEqual(expect.arrayContaining(['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce']));
      expect(metadata.claims_parameter_supported).toBe(false);
      expect(metadata.request_uri_parameter_supported).toBe(false);
    });

    it('agrees with the RFC 8414 document on every value both carry', async () => {
      const oauth = (await (await fetch(new URL('/.well-known/oauth-authorization-server', issuer))).json()) as Record<string, unknown>;
      const openid = config.serverMetadata() as Record<string, unknown>;
      for (const [name, value] of Object.entries(oauth)) expect([name, openid[name]]).toEqual([name, value]);
    });
  });

  describe('oidcc-server: the code flow with openid', () => {
    let tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers;
    let nonce: string;

    beforeAll(async () => {
      ({ tokens, nonce } = await signIn('openid notes:read'));
    });

    it('returns an ID token beside the access token (Core §3.1.3.3)', () => {
      expect(tokens.id_token).toEqual(expect.any(String));
      expect(tokens.access_token).toMatch(/^lk_at_/);
    });

    it('asserts the person by a stable id, never the username, with the claims of Core §2', () => {
      const claims = tokens.claims()!;
      expect(claims.sub).toBe(userId);
      expect(claims.sub).not.toBe(user.username);
      expect(claims.iss).toBe(config.serverMetadata().issuer);
      expect(claims.aud).toBe(clientId);
      expect(claims.nonce).toBe(nonce);
      expect(claims.amr).toEqual(['pwd']);
      expect(typeof claims.auth_time).toBe('number');
      expect(claims.auth_time).toBeLessThanOrEqual(claims.iat);
      expect(claims.exp - claims.iat).toBe(3600);
      // Back-Channel Logout 1.0 §2.1: the session it was signed in through, by a public id.
      expect(claims.sid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    });

    it('oidcc-id-token-signature: is signed by a published key (RS256 by default)', async () => {
      const jwks = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri!));
      const { protectedHeader } = await jwtVerify(tokens.id_token!, jwks, { issuer: config.serverMetadata().issuer, audience: clientId });
      expect(protectedHeader.alg).toBe('RS256');
      expect(protectedHeader.kid).toEqual(expect.any(String));
    });

    it('binds the access token with at_hash (Core §3.1.3.6)', () => {
      const digest = createHash('sha256').update(tokens.access_token, 'ascii').digest();
      expect(tokens.claims()!.at_hash).toBe(digest.subarray(0, 16).toString('base64url'));
    });

    it('oidcc-refresh-token: a refresh returns a new ID token for the same person, with the original auth_time and no nonce (Core §12.2)', async () => {
      const first = tokens.claims()!;
      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      const claims = refreshed.claims()!;
      expect(refreshed.id_token).not.toBe(tokens.id_token);
      expect(claims.sub).toBe(first.sub);
      expect(claims.aud).toBe(first.aud);
      expect(claims.auth_time).toBe(first.auth_time);
      expect(claims.sid).toBe(first.sid);
      expect(claims.nonce).toBeUndefined();
      const digest = createHash('sha256').update(refreshed.access_token, 'ascii').digest();
      expect(claims.at_hash).toBe(digest.subarray(0, 16).toString('base64url'));
    });

    it('a refresh that narrows the scope to exclude openid gets no ID token', async () => {
      const { tokens: again } = await signIn('openid notes:read');
      const refreshed = await oidc.refreshTokenGrant(config, again.refresh_token!, { scope: 'notes:read' });
      expect(refreshed.id_token).toBeUndefined();
      expect(refreshed.scope).toBe('notes:read');
    });
  });

  describe('oidcc-userinfo-get, oidcc-userinfo-post-header: claims by scope (Core §5.3, §5.4)', () => {
    const userinfo = (accessToken: string, method = 'GET', headers: Record<string, string> = {}): Promise<Response> =>
      fetch(config.serverMetadata().userinfo_endpoint!, { method, headers: { authorization: `Bearer ${accessToken}`, ...headers } });

    it('openid alone releases sub only; the library checks it against the ID token', async () => {
      const { tokens } = await signIn('openid');
      const info = await oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub);
      expect(info).toEqual({ sub: userId });
    });

    it('profile and email release the name and the address, which an administrator has not verified', async () => {
      const { tokens } = await signIn('openid profile email');
      const info = await oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub);
      expect(info).toEqual({ sub: userId, name: 'Alice Liddell', given_name: 'Alice', family_name: 'Liddell', preferred_username: user.username, updated_at: expect.any(Number), email: 'alice@example.com', email_verified: false });
    });

    it('answers POST with the token in the header the same, never cached', async () => {
      const { tokens } = await signIn('openid email');
      const response = await userinfo(tokens.access_token, 'POST');
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(await response.json()).toEqual({ sub: userId, email: 'alice@example.com', email_verified: false });
    });

    it('oidcc-userinfo-post-body: takes the token from a form-encoded POST body (RFC 6750 §2.2), once only', async () => {
      const { tokens } = await signIn('openid');
      const form = (body: string, headers: Record<string, string> = {}) =>
        fetch(config.serverMetadata().userinfo_endpoint!, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });
      const ok = await form(`access_token=${tokens.access_token}`);
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ sub: userId });
      const twice = await form(`access_token=${tokens.access_token}`, { authorization: `Bearer ${tokens.access_token}` });
      expect(twice.status).toBe(400);
      expect(((await twice.json()) as { error: string }).error).toBe('invalid_request');
      expect((await form('access_token=lk_at_unknown')).status).toBe(401);
    });

    it('takes no body token where the route did not ask for it (the data API)', async () => {
      const { tokens } = await signIn('openid notes:read');
      const response = await fetch(new URL('/api/v1/notes', issuer), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `access_token=${tokens.access_token}` });
      expect(response.status).toBe(401);
    });

    it('refuses a token without openid with insufficient_scope (RFC 6750 §3.1)', async () => {
      const { tokens } = await signIn('notes:read');
      const response = await userinfo(tokens.access_token);
      expect(response.status).toBe(403);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="latchkey", error="insufficient_scope".*scope="openid"/);
      expect(((await response.json()) as { error: string }).error).toBe('insufficient_scope');
    });

    it('refuses a missing or unknown token with 401 and a challenge', async () => {
      const missing = await fetch(config.serverMetadata().userinfo_endpoint!);
      expect(missing.status).toBe(401);
      expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer realm="latchkey"/);
      const unknown = await userinfo('lk_at_not-a-token');
      expect(unknown.status).toBe(401);
      expect(unknown.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    });

    it('refuses a revoked token', async () => {
      const { tokens } = await signIn('openid');
      await oidc.tokenRevocation(config, tokens.access_token);
      expect((await userinfo(tokens.access_token)).status).toBe(401);
    });
  });

  describe('oidcc-ensure-request-without-nonce-succeeds-for-code-flow', () => {
    it('issues an ID token without a nonce claim when the request had none', async () => {
      const verifier = oidc.randomPKCECodeVerifier();
      const callback = await authorize({ scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
      const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, idTokenExpected: true });
      expect(tokens.claims()!.nonce).toBeUndefined();
    });
  });

  describe('a plain OAuth request (no openid scope)', () => {
    it('gets no ID token: only an authentication request does', async () => {
      const { tokens } = await signIn('notes:read');
      expect(tokens.id_token).toBeUndefined();
      expect(tokens.scope).toBe('notes:read');
    });
  });

  describe('the JWKS (RFC 7517 §5)', () => {
    let response: Response;
    let jwks: { keys: Record<string, unknown>[] };

    beforeAll(async () => {
      response = await fetch(config.serverMetadata().jwks_uri!);
      jwks = (await response.json()) as typeof jwks;
    });

    it('is served as a JWK set, cacheable for less than the publish lead', () => {
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/jwk-set\+json/);
      const maxAge = Number(/max-age=(\d+)/.exec(response.headers.get('cache-control') ?? '')?.[1]);
      expect(response.headers.get('cache-control')).toMatch(/^public/);
      // The default lead is an hour and each instance reloads every minute: a new key reaches every cache before it signs.
      expect(maxAge).toBeGreaterThan(0);
      expect(maxAge + 60).toBeLessThanOrEqual(3600);
    });

    it('publishes one key per algorithm, RS256, ES256 and EdDSA, each with its kid, for signatures only', () => {
      expect(jwks.keys.map((key) => key.alg).sort()).toEqual(['ES256', 'EdDSA', 'RS256']);
      for (const key of jwks.keys) {
        expect(key).toEqual(expect.objectContaining({ use: 'sig', kid: expect.any(String) }));
      }
    });

    it('holds no private key material', () => {
      for (const key of jwks.keys) for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k']) expect(key).not.toHaveProperty(member);
    });

    it('names the key that signed each ID token', async () => {
      const { tokens } = await signIn();
      const { kid } = decodeProtectedHeader(tokens.id_token!);
      expect(jwks.keys.map((key) => key.kid)).toContain(kid);
    });
  });
});
