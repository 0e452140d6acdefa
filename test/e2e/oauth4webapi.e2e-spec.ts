/**
 * The whole flow through a maintained third-party client library, unmodified: oauth4webapi (v3).
 * It checks the issuer on discovery and on the authorization response (RFC 9207), the state, the
 * token response's shape, and it sends its own client authentication and PKCE.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import * as oauth from 'oauth4webapi';
import type { NewClient } from '../../src/clients/client-information.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { Browser } from '../helpers/browser.js';
import { authorizeAsUser } from '../helpers/oauth-flow.js';
import type { TestUser } from '../helpers/test-app.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { dropTestDatabase } from '../helpers/test-database.js';

const REDIRECT_URI = 'http://127.0.0.1:9/callback';
/** oauth4webapi refuses http:// unless told; we test over loopback. */
const INSECURE = { [oauth.allowInsecureRequests]: true } as const;

/** Drives login and consent in a browser and returns the URL the browser was redirected to. */
async function authorizeInBrowser(as: oauth.AuthorizationServer, user: TestUser, params: Record<string, string>, decision: 'allow' | 'deny' = 'allow'): Promise<URL> {
  const url = new URL(as.authorization_endpoint!);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  const page = await authorizeAsUser(new Browser(url.origin), user, url.href, decision);
  if ((page.status !== 302 && page.status !== 303) || !page.location) throw new Error(`Expected a redirect to the client, got ${page.status}:\n${page.body}`);
  return new URL(page.location);
}

describe('the authorization code flow through oauth4webapi', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  let as: oauth.AuthorizationServer;
  let user: TestUser;

  async function registerClient(options: Partial<NewClient> = {}): Promise<{ client: oauth.Client; secret?: string }> {
    const { client, secret } = await nest.get(ClientsService).create({ name: 'oauth4webapi', redirectUris: [REDIRECT_URI], scope: 'notes:read notes:write', ...options });
    return { client: { client_id: client.id }, secret };
  }

  /** Authorization request with PKCE and state, then the library validates the response. */
  async function authorize(client: oauth.Client, scope = 'notes:read'): Promise<{ params: URLSearchParams; verifier: string }> {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const callback = await authorizeInBrowser(as, user, {
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: REDIRECT_URI,
      scope,
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    return { params: oauth.validateAuthResponse(as, client, callback, state), verifier };
  }

  beforeAll(async () => {
    ({ nest, issuer } = await startAtIssuer());
    const username = `alice_${Date.now().toString(36)}`;
    const password = 'correct horse battery staple';
    await nest.get(UsersService).create(username, password);
    user = { username, password };
    const response = await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...INSECURE });
    as = await oauth.processDiscoveryResponse(issuer, response);
  });
  afterAll(async () => {
    await nest?.close();
    await dropTestDatabase();
  });

  describe('discovery (RFC 8414)', () => {
    it('finds the metadata at /.well-known/oauth-authorization-server and accepts its issuer', () => {
      expect(as.issuer).toBe(issuer.href.replace(/\/$/, ''));
      expect(as.authorization_endpoint).toBe(`${as.issuer}/authorize`);
      expect(as.token_endpoint).toBe(`${as.issuer}/token`);
      expect(as.code_challenge_methods_supported).toEqual(['S256']);
      expect(as.authorization_response_iss_parameter_supported).toBe(true);
    });

    it('is refused by the library when the issuer expected differs from the one served', async () => {
      const response = await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...INSECURE });
      await expect(oauth.processDiscoveryResponse(new URL('http://localhost:1'), response)).rejects.toThrow(oauth.OperationProcessingError);
    });
  });

  describe('a confidential client with client_secret_basic', () => {
    let client: oauth.Client;
    let auth: oauth.ClientAuth;
    let tokens: oauth.TokenEndpointResponse;

    beforeAll(async () => {
      const registered = await registerClient();
      client = registered.client;
      auth = oauth.ClientSecretBasic(registered.secret!);
    });

    it('obtains a code (with iss and state checked by the library) and exchanges it for tokens', async () => {
      const { params, verifier } = await authorize(client, 'notes:read notes:write');
      expect(params.get('code')).toMatch(/^lk_ac_/);
      const response = await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT_URI, verifier, INSECURE);
      tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
      expect(tokens).toEqual({
        access_token: expect.stringMatching(/^lk_at_/),
        token_type: 'bearer',
        expires_in: 3600,
        refresh_token: expect.stringMatching(/^lk_rt_/),
        scope: 'notes:read notes:write',
      });
    });

    it('uses the access token at the REST API', async () => {
      const response = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL('/api/v1/notes', as.issuer), undefined, undefined, INSECURE);
      expect(response.status).toBe(200);
    });

    it('refreshes: a new access token and a rotated refresh token', async () => {
      const response = await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, INSECURE);
      const refreshed = await oauth.processRefreshTokenResponse(as, client, response);
      expect(refreshed.access_token).toMatch(/^lk_at_/);
      expect(refreshed.access_token).not.toBe(tokens.access_token);
      expect(refreshed.refresh_token).toMatch(/^lk_rt_/);
      expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
      expect(refreshed.scope).toBe('notes:read notes:write');
    });

    it('narrows the scope on refresh when asked', async () => {
      const { params, verifier } = await authorize(client, 'notes:read notes:write');
      const first = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT_URI, verifier, INSECURE));
      const response = await oauth.refreshTokenGrantRequest(as, client, auth, first.refresh_token!, { ...INSECURE, additionalParameters: { scope: 'notes:read' } });
      expect((await oauth.processRefreshTokenResponse(as, client, response)).scope).toBe('notes:read');
    });

    it('gets invalid_grant, as a ResponseBodyError, for a refresh token that was already rotated', async () => {
      const response = await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, INSECURE);
      const error = await oauth.processRefreshTokenResponse(as, client, response).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(oauth.ResponseBodyError);
      expect(error).toMatchObject({ error: 'invalid_grant', status: 400 });
    });

    it('gets invalid_grant when the code is redeemed twice', async () => {
      const { params, verifier } = await authorize(client);
      await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT_URI, verifier, INSECURE));
      const again = await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT_URI, verifier, INSECURE);
      await expect(oauth.processAuthorizationCodeResponse(as, client, again)).rejects.toMatchObject({ error: 'invalid_grant' });
    });

    it('gets invalid_grant for a wrong PKCE verifier', async () => {
      const { params } = await authorize(client);
      const response = await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT_URI, oauth.generateRandomCodeVerifier(), INSECURE);
      await expect(oauth.processAuthorizationCodeResponse(as, client, response)).rejects.toMatchObject({ error: 'invalid_grant' });
    });

    it('gets invalid_client (401) with a wrong secret', async () => {
      const { params, verifier } = await authorize(client);
      const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic('lk_cs_wrong'), params, REDIRECT_URI, verifier, INSECURE);
      // RFC 6749 §5.2: 401 with a WWW-Authenticate challenge for the scheme the client used, which
      // the library surfaces as a WWWAuthenticateChallengeError; the body still says invalid_client.
      const error = await oauth.processAuthorizationCodeResponse(as, client, response).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
      const challenge = error as oauth.WWWAuthenticateChallengeError;
      expect(challenge.status).toBe(401);
      expect(challenge.cause.map((c) => c.scheme)).toEqual(['basic']);
      expect(await challenge.response.json()).toMatchObject({ error: 'invalid_client' });
    });
  });

  describe('a confidential client with client_secret_post', () => {
    it('completes the flow', async () => {
      const registered = await registerClient({ tokenEndpointAuthMethod: 'client_secret_post' });
      const auth = oauth.ClientSecretPost(registered.secret!);
      const { params, verifier } = await authorize(registered.client);
      const response = await oauth.authorizationCodeGrantRequest(as, registered.client, auth, params, REDIRECT_URI, verifier, INSECURE);
      const tokens = await oauth.processAuthorizationCodeResponse(as, registered.client, response);
      expect(tokens.access_token).toMatch(/^lk_at_/);
      expect(tokens.scope).toBe('notes:read');
    });
  });

  describe('a public client with None() and PKCE', () => {
    let client: oauth.Client;

    beforeAll(async () => {
      ({ client } = await registerClient({ isPublic: true }));
    });

    it('completes the flow and refreshes without a secret', async () => {
      const { params, verifier } = await authorize(client);
      const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT_URI, verifier, INSECURE));
      expect(tokens).toMatchObject({ access_token: expect.stringMatching(/^lk_at_/), token_type: 'bearer', scope: 'notes:read' });
      expect(tokens.refresh_token).toMatch(/^lk_rt_/);
      const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, INSECURE));
      expect(refreshed.access_token).not.toBe(tokens.access_token);
    });

    it('cannot redeem a code without the PKCE verifier', async () => {
      const { params } = await authorize(client);
      const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT_URI, oauth.nopkce, INSECURE);
      await expect(oauth.processAuthorizationCodeResponse(as, client, response)).rejects.toMatchObject({ error: 'invalid_grant' });
    });
  });

  describe('authorization responses the library must refuse', () => {
    let client: oauth.Client;

    beforeAll(async () => {
      ({ client } = await registerClient());
    });

    async function callback(state: string): Promise<URL> {
      return authorizeInBrowser(as, user, {
        response_type: 'code',
        client_id: client.client_id,
        redirect_uri: REDIRECT_URI,
        scope: 'notes:read',
        state,
        code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
        code_challenge_method: 'S256',
      });
    }

    it('accepts the untouched response', async () => {
      const state = oauth.generateRandomState();
      expect(oauth.validateAuthResponse(as, client, await callback(state), state).get('code')).toBeTruthy();
    });

    it('refuses a response whose state was tampered with (CSRF, RFC 6749 §10.12)', async () => {
      const state = oauth.generateRandomState();
      const url = await callback(state);
      url.searchParams.set('state', `${state}x`);
      expect(() => oauth.validateAuthResponse(as, client, url, state)).toThrow(oauth.OperationProcessingError);
      expect(() => oauth.validateAuthResponse(as, client, url, state)).toThrow(/state/);
    });

    it('refuses a response from another issuer (mix-up, RFC 9207)', async () => {
      const state = oauth.generateRandomState();
      const url = await callback(state);
      url.searchParams.set('iss', 'https://attacker.example');
      expect(() => oauth.validateAuthResponse(as, client, url, state)).toThrow(/iss/);
    });

    it('refuses a response without iss, since the server advertises it', async () => {
      const state = oauth.generateRandomState();
      const url = await callback(state);
      url.searchParams.delete('iss');
      expect(() => oauth.validateAuthResponse(as, client, url, state)).toThrow(/iss/);
    });

    it('reports a denial as an AuthorizationResponseError with access_denied', async () => {
      const state = oauth.generateRandomState();
      const url = await authorizeInBrowser(as, user, { response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT_URI, scope: 'notes:write', state, code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()), code_challenge_method: 'S256' }, 'deny');
      let error: unknown;
      try {
        oauth.validateAuthResponse(as, client, url, state);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(oauth.AuthorizationResponseError);
      expect(error).toMatchObject({ error: 'access_denied' });
    });
  });
});
