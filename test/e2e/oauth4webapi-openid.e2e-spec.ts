/**
 * OpenID Connect through oauth4webapi (v3), unmodified, over real HTTP: discovery with the 'oidc'
 * algorithm, the code flow with PKCE, state and nonce, where the library validates the ID token
 * (iss, aud, exp, iat, sub, nonce, auth_time for max_age, the signing alg the client expects), its
 * signature against the published JWKS, userinfo (sub checked against the ID token) and refresh.
 * Test names follow the OpenID Foundation's Basic OP test modules they mirror.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import * as oauth from 'oauth4webapi';
import { ClientsService } from '../../src/clients/clients.service.js';
import type { OpenIdClientMetadata } from '../../src/clients/openid-client-settings.js';
import { UsersService } from '../../src/users/users.service.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { Browser, isLoginPage } from '../helpers/browser.js';
import { authorizeAsUser } from '../helpers/oauth-flow.js';
import type { TestUser } from '../helpers/test-app.js';
import { dropTestDatabase } from '../helpers/test-database.js';

const REDIRECT_URI = 'http://127.0.0.1:9/callback';
/** oauth4webapi refuses http:// unless told; we test over loopback. */
const INSECURE = { [oauth.allowInsecureRequests]: true } as const;

interface Registered {
  client: oauth.Client;
  auth: oauth.ClientAuth;
}

/** What the code exchange returned, before the library processed it, and the nonce that was sent. */
interface Exchange {
  response: Response;
  nonce: string;
}

const headerOf = (jwt: string): { alg: string; kid?: string } => JSON.parse(Buffer.from(jwt.split('.')[0], 'base64url').toString()) as { alg: string; kid?: string };

describe('OpenID Connect through oauth4webapi', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  let as: oauth.AuthorizationServer;
  let user: TestUser;
  let userId: string;
  let rp: Registered;

  /** A confidential client; the library is told the OpenID metadata it was registered with. */
  async function register(openId?: OpenIdClientMetadata): Promise<Registered> {
    const { client, secret } = await nest.get(ClientsService).create({ name: 'oauth4webapi OIDC', redirectUris: [REDIRECT_URI], scope: 'notes:read', ...(openId ? { openId } : {}) });
    return { client: { client_id: client.id, ...(openId as Record<string, string>) }, auth: oauth.ClientSecretBasic(secret!) };
  }

  /** Authorization request with PKCE, state and nonce through a browser; the library checks the callback (state, iss) and redeems the code. */
  async function exchange({ client, auth }: Registered, scope = 'openid', extra: Record<string, string> = {}, browser?: Browser): Promise<Exchange> {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const url = new URL(as.authorization_endpoint!);
    const params = { response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT_URI, scope, state, nonce, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', ...extra };
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    const page = await authorizeAsUser(browser ?? new Browser(url.origin), user, url.href);
    if ((page.status !== 302 && page.status !== 303) || !page.location) throw new Error(`Expected a redirect to the client, got ${page.status}:\n${page.body}`);
    const callback = oauth.validateAuthResponse(as, client, new URL(page.location), state);
    return { response: await oauth.authorizationCodeGrantRequest(as, client, auth, callback, REDIRECT_URI, verifier, INSECURE), nonce };
  }

  /** A complete sign-in: the library requires an ID token and validates it, with the nonce sent. */
  async function signIn(registered: Registered, scope = 'openid', options: { maxAge?: number; browser?: Browser; extra?: Record<string, string> } = {}) {
    const { response, nonce } = await exchange(registered, scope, options.extra, options.browser);
    const processOptions = { expectedNonce: nonce, requireIdToken: true, ...(options.maxAge !== undefined ? { maxAge: options.maxAge } : {}) };
    const tokens = await oauth.processAuthorizationCodeResponse(as, registered.client, response, processOptions);
    return { response, tokens, nonce, claims: oauth.getValidatedIdTokenClaims(tokens)! };
  }

  beforeAll(async () => {
    ({ nest, issuer } = await startAtIssuer());
    user = { username: `alice_${Date.now().toString(36)}`, password: 'correct horse battery staple' };
    userId = (await nest.get(UsersService).create(user.username, user.password, { email: 'alice@example.com', name: 'Alice Liddell', givenName: 'Alice', familyName: 'Liddell' })).id;
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...INSECURE }));
    rp = await register();
  });
  afterAll(async () => {
    await nest?.close();
    await dropTestDatabase();
  });

  describe('oidcc-discovery-endpoint-verification', () => {
    it('finds /.well-known/openid-configuration for the issuer and accepts its issuer', () => {
      expect(as.issuer).toBe(issuer.href.replace(/\/$/, ''));
      expect(as.jwks_uri).toBe(`${as.issuer}/.well-known/jwks.json`);
      expect(as.userinfo_endpoint).toBe(`${as.issuer}/userinfo`);
      expect(as.end_session_endpoint).toBe(`${as.issuer}/session/end`);
      expect(as.id_token_signing_alg_values_supported).toEqual(['RS256', 'ES256', 'EdDSA']);
    });

    it('is refused by the library when the issuer expected differs from the one served', async () => {
      const response = await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...INSECURE });
      await expect(oauth.processDiscoveryResponse(new URL(`http://localhost:${issuer.port}`), response)).rejects.toThrow(oauth.OperationProcessingError);
    });
  });

  describe('oidcc-server: the code flow with openid', () => {
    let signedIn: Awaited<ReturnType<typeof signIn>>;

    beforeAll(async () => {
      signedIn = await signIn(rp, 'openid notes:read');
    });

    it('returns an ID token the library validates, with the nonce echoed and a stable sub (Core §3.1.3.7)', () => {
      const { tokens, claims, nonce } = signedIn;
      expect(tokens.access_token).toMatch(/^lk_at_/);
      expect(tokens.id_token).toEqual(expect.any(String));
      expect(claims).toMatchObject({ iss: as.issuer, aud: rp.client.client_id, sub: userId, nonce });
      expect(claims.sub).not.toBe(user.username);
      expect(claims.auth_time).toBeLessThanOrEqual(claims.iat);
    });

    it('oidcc-idtoken-signature: the signature verifies against a key in the JWKS (RS256 by default)', async () => {
      await expect(oauth.validateApplicationLevelSignature(as, signedIn.response, INSECURE)).resolves.toBeUndefined();
      const { alg, kid } = headerOf(signedIn.tokens.id_token!);
      expect([alg, kid]).toEqual(['RS256', expect.any(String)]);
    });

    it('oidcc-refresh-token: a refresh returns a new ID token for the same person (Core §12.2)', async () => {
      const response = await oauth.refreshTokenGrantRequest(as, rp.client, rp.auth, signedIn.tokens.refresh_token!, INSECURE);
      const refreshed = await oauth.processRefreshTokenResponse(as, rp.client, response);
      const claims = oauth.getValidatedIdTokenClaims(refreshed)!;
      expect(refreshed.id_token).toEqual(expect.any(String));
      expect(refreshed.id_token).not.toBe(signedIn.tokens.id_token);
      expect(claims).toMatchObject({ iss: as.issuer, aud: rp.client.client_id, sub: signedIn.claims.sub, auth_time: signedIn.claims.auth_time });
      expect(claims.nonce).toBeUndefined();
      await expect(oauth.validateApplicationLevelSignature(as, response, INSECURE)).resolves.toBeUndefined();
    });
  });

  describe('oidcc-userinfo-get', () => {
    it('releases the profile and email claims, for the sub of the ID token (Core §5.3.2)', async () => {
      const { tokens, claims } = await signIn(rp, 'openid profile email');
      const response = await oauth.userInfoRequest(as, rp.client, tokens.access_token, INSECURE);
      const info = await oauth.processUserInfoResponse(as, rp.client, claims.sub, response);
      expect(info).toEqual({ sub: userId, name: 'Alice Liddell', given_name: 'Alice', family_name: 'Liddell', preferred_username: user.username, updated_at: expect.any(Number), email: 'alice@example.com', email_verified: false });
    });

    it('is refused by the library when the sub differs from the one expected (Core §5.3.2)', async () => {
      const { tokens } = await signIn(rp, 'openid');
      const response = await oauth.userInfoRequest(as, rp.client, tokens.access_token, INSECURE);
      await expect(oauth.processUserInfoResponse(as, rp.client, 'someone-else', response)).rejects.toThrow(/sub/);
    });
  });

  describe('oidcc-idtoken-signature: per-client algorithms (Registration §2)', () => {
    it.each(['ES256', 'EdDSA'])('signs with %s for a client registered for it; the library accepts it and verifies it', async (alg) => {
      const registered = await register({ id_token_signed_response_alg: alg });
      const { response, tokens, claims } = await signIn(registered);
      expect(headerOf(tokens.id_token!).alg).toBe(alg);
      expect(claims.sub).toBe(userId);
      await expect(oauth.validateApplicationLevelSignature(as, response, INSECURE)).resolves.toBeUndefined();
    });

    it('the library refuses an ID token signed with another alg than the client registered', async () => {
      const { response, nonce } = await exchange(rp);
      const expectingES256 = { ...rp.client, id_token_signed_response_alg: 'ES256' };
      await expect(oauth.processAuthorizationCodeResponse(as, expectingES256, response, { expectedNonce: nonce, requireIdToken: true })).rejects.toThrow(/alg/);
    });
  });

  describe('oidcc-max-age-10000', () => {
    it('a recent sign-in is enough: no new sign-in, and auth_time is present and the same', async () => {
      const browser = new Browser(issuer.origin);
      const first = await signIn(rp, 'openid', { browser });
      const url = new URL(as.authorization_endpoint!);
      const challenge = await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier());
      url.search = new URLSearchParams({ response_type: 'code', client_id: rp.client.client_id, redirect_uri: REDIRECT_URI, scope: 'openid', max_age: '10000', code_challenge: challenge, code_challenge_method: 'S256' }).toString();
      const page = await browser.get(url.href);
      expect(isLoginPage(page)).toBe(false);
      expect(new URL(page.location!).searchParams.get('code')).toBeTruthy();
      const second = await signIn(rp, 'openid', { browser, maxAge: 10000, extra: { max_age: '10000' } });
      expect(second.claims.auth_time).toEqual(expect.any(Number));
      expect(second.claims.auth_time).toBe(first.claims.auth_time);
    });
  });

  describe('pairwise subjects (Core §8.1)', () => {
    it('gives a pairwise client a sub that is not the user id, and the same sub at userinfo', async () => {
      const registered = await register({ subject_type: 'pairwise' });
      const { tokens, claims } = await signIn(registered);
      expect(claims.sub).not.toBe(userId);
      const info = await oauth.processUserInfoResponse(as, registered.client, claims.sub, await oauth.userInfoRequest(as, registered.client, tokens.access_token, INSECURE));
      expect(info.sub).toBe(claims.sub);
    });
  });

  describe('ID tokens the library must refuse', () => {
    it('oidcc-ensure-request-with-nonce: refuses one whose nonce is not the one this request sent (Core §3.1.3.7)', async () => {
      const { response } = await exchange(rp);
      const error = await oauth.processAuthorizationCodeResponse(as, rp.client, response, { expectedNonce: oauth.generateRandomNonce(), requireIdToken: true }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(oauth.OperationProcessingError);
      expect(error).toMatchObject({ code: oauth.JWT_CLAIM_COMPARISON, cause: { claim: 'nonce' } });
    });

    it('refuses one whose iss is not the issuer the client discovered (Core §3.1.3.7 step 2)', async () => {
      // The metadata a client would hold had it discovered the provider at another issuer identifier.
      const elsewhere: oauth.AuthorizationServer = { ...as, issuer: `http://localhost:${issuer.port}` };
      const { response, nonce } = await exchange(rp);
      const error = await oauth.processAuthorizationCodeResponse(elsewhere, rp.client, response, { expectedNonce: nonce, requireIdToken: true }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(oauth.OperationProcessingError);
      expect(error).toMatchObject({ code: oauth.JWT_CLAIM_COMPARISON, cause: { claim: 'iss' } });
    });
  });
});
