/**
 * Pushed Authorization Requests (RFC 9126) through oauth4webapi (v3), unmodified, over real HTTP:
 * the library finds the pushed_authorization_request_endpoint by discovery, pushes the request with
 * its own client authentication (client_secret_basic, or none for a public client) and PKCE, and
 * the browser brings only client_id and request_uri to /authorize. The library then checks the
 * callback (state, RFC 9207 iss), redeems the code and validates the ID token with the pushed nonce.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import * as oauth from 'oauth4webapi';
import type { DataSource } from 'typeorm';
import type { NewClient } from '../../src/clients/client-information.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { AuthorizationCode } from '../../src/codes/authorization-code.entity.js';
import { UsersService } from '../../src/users/users.service.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { Browser, isLoginPage, type Page } from '../helpers/browser.js';
import { prepareCodeRequest, type Prepared } from '../helpers/oauth4webapi.js';
import { authorizeAsUser } from '../helpers/oauth-flow.js';
import type { TestUser } from '../helpers/test-app.js';
import { dropTestDatabase } from '../helpers/test-database.js';

const REDIRECT_URI = 'http://127.0.0.1:9/callback';
/** oauth4webapi refuses http:// unless told; we test over loopback. */
const INSECURE = { [oauth.allowInsecureRequests]: true } as const;
const REQUEST_URI = /^urn:ietf:params:oauth:request_uri:lk_par_[A-Za-z0-9_-]+$/;

interface Registered {
  client: oauth.Client;
  auth: oauth.ClientAuth;
}

describe('Pushed Authorization Requests through oauth4webapi (RFC 9126)', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  /** Discovered with the 'oidc' algorithm (/.well-known/openid-configuration). */
  let as: oauth.AuthorizationServer;
  /** Discovered with the 'oauth2' algorithm (/.well-known/oauth-authorization-server). */
  let asOAuth: oauth.AuthorizationServer;
  let user: TestUser;
  let userId: string;

  async function register(options: Partial<NewClient> = {}): Promise<Registered> {
    const { client, secret } = await nest.get(ClientsService).create({ name: 'oauth4webapi PAR', redirectUris: [REDIRECT_URI], scope: 'notes:read', ...options });
    return { client: { client_id: client.id }, auth: options.isPublic ? oauth.None() : oauth.ClientSecretBasic(secret!) };
  }

  /** What the client pushes (with PKCE S256, state and nonce) and keeps to check the answer. */
  const prepare = (scope: string): Promise<Prepared> => prepareCodeRequest(REDIRECT_URI, scope);

  /** The library pushes the request to the endpoint it discovered and parses the 201 answer. */
  async function push({ client, auth }: Registered, parameters: Record<string, string>): Promise<oauth.PushedAuthorizationResponse> {
    const response = await oauth.pushedAuthorizationRequest(as, client, auth, parameters, INSECURE);
    return oauth.processPushedAuthorizationResponse(as, client, response);
  }

  /** What the browser is sent to after a push: the authorization endpoint with client_id and request_uri only (RFC 9126 §4). */
  function authorizationUrl(client: oauth.Client, requestUri: string): URL {
    const url = new URL(as.authorization_endpoint!);
    url.searchParams.set('client_id', client.client_id);
    url.searchParams.set('request_uri', requestUri);
    return url;
  }

  /** Sign-in and consent in the browser; the final redirect to the client. */
  async function inBrowser(url: URL, browser = new Browser(url.origin)): Promise<URL> {
    const page = await authorizeAsUser(browser, user, url.href);
    if ((page.status !== 302 && page.status !== 303) || !page.location) throw new Error(`Expected a redirect to the client, got ${page.status}:\n${page.body}`);
    return new URL(page.location);
  }

  const codesOf = (client: oauth.Client): Promise<number> => nest.get<DataSource>(getDataSourceToken()).getRepository(AuthorizationCode).countBy({ clientId: client.client_id });

  const readNotes = async (accessToken: string): Promise<Response> => oauth.protectedResourceRequest(accessToken, 'GET', new URL('/api/v1/notes', as.issuer), undefined, undefined, INSECURE);

  beforeAll(async () => {
    ({ nest, issuer } = await startAtIssuer());
    user = { username: `alice_${Date.now().toString(36)}`, password: 'correct horse battery staple' };
    userId = (await nest.get(UsersService).create(user.username, user.password)).id;
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...INSECURE }));
    asOAuth = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...INSECURE }));
  });
  afterAll(async () => {
    await nest?.close();
    await dropTestDatabase();
  });

  describe('discovery (RFC 9126 §5)', () => {
    it('both metadata documents name the pushed authorization request endpoint and do not require it server-wide', () => {
      for (const metadata of [as, asOAuth]) {
        expect(metadata.issuer).toBe(issuer.href.replace(/\/$/, ''));
        expect(metadata.pushed_authorization_request_endpoint).toBe(`${metadata.issuer}/par`);
        expect(metadata.require_pushed_authorization_requests).toBe(false);
        expect(metadata.authorization_response_iss_parameter_supported).toBe(true);
      }
    });
  });

  describe('a confidential client with client_secret_basic, OpenID Connect', () => {
    let rp: Registered;
    let prepared: Prepared;
    let pushed: oauth.PushedAuthorizationResponse;
    let callback: URL;
    let tokens: oauth.TokenEndpointResponse;
    let response: Response;

    beforeAll(async () => {
      rp = await register();
      prepared = await prepare('openid notes:read');
      pushed = await push(rp, prepared.parameters);
      callback = await inBrowser(authorizationUrl(rp.client, pushed.request_uri));
    });

    it('pushes the request: a request_uri in the RFC 9126 URN namespace, valid for 60 s', () => {
      expect(pushed).toEqual({ request_uri: expect.stringMatching(REQUEST_URI), expires_in: 60 });
    });

    it('the browser, sent with client_id and request_uri only, comes back with a code, the pushed state and iss, which the library accepts (RFC 9207)', () => {
      expect(callback.href.startsWith(`${REDIRECT_URI}?`)).toBe(true);
      expect(callback.searchParams.get('iss')).toBe(as.issuer);
      expect(callback.searchParams.get('state')).toBe(prepared.state);
      const params = oauth.validateAuthResponse(as, rp.client, callback, prepared.state);
      expect(params.get('code')).toMatch(/^lk_ac_/);
    });

    it('redeems the code with the PKCE verifier; the library validates the ID token with the pushed nonce', async () => {
      const params = oauth.validateAuthResponse(as, rp.client, callback, prepared.state);
      response = await oauth.authorizationCodeGrantRequest(as, rp.client, rp.auth, params, REDIRECT_URI, prepared.verifier, INSECURE);
      tokens = await oauth.processAuthorizationCodeResponse(as, rp.client, response, { expectedNonce: prepared.nonce, requireIdToken: true });
      expect(tokens).toMatchObject({ access_token: expect.stringMatching(/^lk_at_/), token_type: 'bearer', id_token: expect.any(String) });
      // The pushed scope was granted (RFC 6749 §3.3: the order of its tokens does not matter).
      expect(tokens.scope?.split(' ').sort()).toEqual(['notes:read', 'openid']);
      const claims = oauth.getValidatedIdTokenClaims(tokens)!;
      expect(claims).toMatchObject({ iss: as.issuer, aud: rp.client.client_id, sub: userId, nonce: prepared.nonce });
      await expect(oauth.validateApplicationLevelSignature(as, response, INSECURE)).resolves.toBeUndefined();
    });

    it('the access token reads the data API', async () => {
      expect(tokens?.access_token).toEqual(expect.any(String));
      expect((await readNotes(tokens.access_token)).status).toBe(200);
    });
  });

  describe('a public client with None() and PKCE', () => {
    let spa: Registered;

    beforeAll(async () => {
      spa = await register({ isPublic: true });
    });

    it('pushes with its client_id only, completes the flow and reads the data API', async () => {
      const prepared = await prepare('notes:read');
      const pushed = await push(spa, prepared.parameters);
      expect(pushed).toEqual({ request_uri: expect.stringMatching(REQUEST_URI), expires_in: 60 });
      const params = oauth.validateAuthResponse(as, spa.client, await inBrowser(authorizationUrl(spa.client, pushed.request_uri)), prepared.state);
      const response = await oauth.authorizationCodeGrantRequest(as, spa.client, spa.auth, params, REDIRECT_URI, prepared.verifier, INSECURE);
      const tokens = await oauth.processAuthorizationCodeResponse(as, spa.client, response);
      expect(tokens).toMatchObject({ access_token: expect.stringMatching(/^lk_at_/), token_type: 'bearer', scope: 'notes:read', refresh_token: expect.stringMatching(/^lk_rt_/) });
      expect(tokens.id_token).toBeUndefined();
      expect((await readNotes(tokens.access_token)).status).toBe(200);
    });

    it('a push without PKCE is refused at /par with invalid_request, which the library reports as a ResponseBodyError', async () => {
      const { parameters } = await prepare('notes:read');
      const { code_challenge: _challenge, code_challenge_method: _method, ...withoutPkce } = parameters;
      const error = await push(spa, withoutPkce).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(oauth.ResponseBodyError);
      expect(error).toMatchObject({ error: 'invalid_request', status: 400 });
    });

    it('the pushed code_challenge binds the code: redeemed with another verifier, it is invalid_grant', async () => {
      const prepared = await prepare('notes:read');
      const pushed = await push(spa, prepared.parameters);
      const params = oauth.validateAuthResponse(as, spa.client, await inBrowser(authorizationUrl(spa.client, pushed.request_uri)), prepared.state);
      const response = await oauth.authorizationCodeGrantRequest(as, spa.client, spa.auth, params, REDIRECT_URI, oauth.generateRandomCodeVerifier(), INSECURE);
      await expect(oauth.processAuthorizationCodeResponse(as, spa.client, response)).rejects.toMatchObject({ error: 'invalid_grant' });
    });
  });

  describe('a client registered with require_pushed_authorization_requests (RFC 9126 §6)', () => {
    let strict: Registered;

    beforeAll(async () => {
      strict = await register({ openId: { require_pushed_authorization_requests: true } });
    });

    it('is refused a plain /authorize at once: invalid_request to its redirect URI, with state and iss, which the library reports', async () => {
      const prepared = await prepare('openid notes:read');
      const url = new URL(as.authorization_endpoint!);
      for (const [name, value] of Object.entries({ client_id: strict.client.client_id, ...prepared.parameters })) url.searchParams.set(name, value);
      const codesBefore = await codesOf(strict.client);
      const page: Page = await new Browser(url.origin).get(url.href);
      expect(isLoginPage(page)).toBe(false);
      expect(page.status).toBe(302);
      const callback = new URL(page.location!);
      expect(callback.href.startsWith(`${REDIRECT_URI}?`)).toBe(true);
      expect(callback.searchParams.get('code')).toBeNull();
      let error: unknown;
      try {
        oauth.validateAuthResponse(as, strict.client, callback, prepared.state);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(oauth.AuthorizationResponseError);
      expect(error).toMatchObject({ error: 'invalid_request' });
      expect(await codesOf(strict.client)).toBe(codesBefore);
    });

    it('completes the pushed flow: code, tokens, an ID token with the nonce, and the data API', async () => {
      const prepared = await prepare('openid notes:read');
      const pushed = await push(strict, prepared.parameters);
      const params = oauth.validateAuthResponse(as, strict.client, await inBrowser(authorizationUrl(strict.client, pushed.request_uri)), prepared.state);
      const response = await oauth.authorizationCodeGrantRequest(as, strict.client, strict.auth, params, REDIRECT_URI, prepared.verifier, INSECURE);
      const tokens = await oauth.processAuthorizationCodeResponse(as, strict.client, response, { expectedNonce: prepared.nonce, requireIdToken: true });
      expect(oauth.getValidatedIdTokenClaims(tokens)).toMatchObject({ aud: strict.client.client_id, sub: userId, nonce: prepared.nonce });
      expect((await readNotes(tokens.access_token)).status).toBe(200);
    });
  });

  describe('a request_uri yields one code (RFC 9126 §4)', () => {
    it('presented again after its code was issued, it is refused with invalid_request_uri, without a redirect or a second code', async () => {
      const rp = await register();
      const browser = new Browser(issuer.origin);
      const prepared = await prepare('openid notes:read');
      const pushed = await push(rp, prepared.parameters);
      const url = authorizationUrl(rp.client, pushed.request_uri);
      const params = oauth.validateAuthResponse(as, rp.client, await inBrowser(url, browser), prepared.state);
      expect(await codesOf(rp.client)).toBe(1);

      // The same browser is signed in and has consented: anything it could use would be answered with a code at once.
      for (const again of [browser, new Browser(issuer.origin)]) {
        const page = await again.get(url.href);
        expect(page.status).toBe(400);
        expect(page.body).toContain('invalid_request_uri');
        expect(page.location).toBeUndefined();
      }
      expect(await codesOf(rp.client)).toBe(1);

      // The code issued the first time is unaffected and redeems once.
      const response = await oauth.authorizationCodeGrantRequest(as, rp.client, rp.auth, params, REDIRECT_URI, prepared.verifier, INSECURE);
      const tokens = await oauth.processAuthorizationCodeResponse(as, rp.client, response, { expectedNonce: prepared.nonce, requireIdToken: true });
      expect(tokens.access_token).toMatch(/^lk_at_/);

      // Whereas a newly pushed request in that browser goes straight to a code: the refusal was the reuse.
      const next = await prepare('openid notes:read');
      const fresh = await browser.get(authorizationUrl(rp.client, (await push(rp, next.parameters)).request_uri).href);
      expect(fresh.status).toBe(302);
      expect(oauth.validateAuthResponse(as, rp.client, new URL(fresh.location!), next.state).get('code')).toMatch(/^lk_ac_/);
      expect(await codesOf(rp.client)).toBe(2);
    });
  });
});
