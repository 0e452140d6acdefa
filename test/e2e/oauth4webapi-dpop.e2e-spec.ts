/**
 * DPoP (RFC 9449) through oauth4webapi (v3), unmodified, over real HTTP: the library signs a proof
 * for every token request and every data-API read with its own key, answers use_dpop_nonce by
 * retrying with the nonce it was handed (isDPoPNonceError), and keeps the newest DPoP-Nonce for
 * the next request. Covers the code flow of a confidential and a public client, refresh, the
 * client_credentials grant, and a client registered with dpop_bound_access_tokens.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import * as oauth from 'oauth4webapi';
import type { NewClient } from '../../src/clients/client-information.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { authorizationCodeGrant, clientCredentialsGrant, getNotes, pushedAuthorization, refreshTokenGrant } from '../helpers/dpop.js';
import { authorizationUrl, startWithUser } from '../helpers/oauth4webapi.js';
import { signIn } from '../helpers/oauth-flow.js';
import type { TestUser } from '../helpers/test-app.js';
import { dropTestDatabase } from '../helpers/test-database.js';

const REDIRECT_URI = 'http://127.0.0.1:9/callback';
/** oauth4webapi refuses http:// unless told; we test over loopback. */
const INSECURE = { [oauth.allowInsecureRequests]: true } as const;

interface Registered {
  client: oauth.Client;
  auth: oauth.ClientAuth;
}

describe('DPoP through oauth4webapi (RFC 9449)', () => {
  let nest: NestFastifyApplication;
  let as: oauth.AuthorizationServer;
  let user: TestUser;

  async function register(options: Partial<NewClient> = {}): Promise<Registered> {
    const { client, secret } = await nest.get(ClientsService).create({ name: 'oauth4webapi DPoP', redirectUris: [REDIRECT_URI], scope: 'notes:read notes:write', ...options });
    return { client: { client_id: client.id }, auth: options.isPublic ? oauth.None() : oauth.ClientSecretBasic(secret!) };
  }

  /** Sign-in and consent in the browser, then the code redeemed with a DPoP proof. */
  async function codeFlow({ client, auth }: Registered, dpop: oauth.DPoPHandle | undefined, scope = 'notes:read'): Promise<oauth.TokenEndpointResponse> {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = authorizationUrl(as, { client_id: client.client_id, response_type: 'code', redirect_uri: REDIRECT_URI, scope, state, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
    const params = oauth.validateAuthResponse(as, client, await signIn(user, url), state);
    return authorizationCodeGrant(as, client, auth, params, REDIRECT_URI, verifier, { DPoP: dpop, ...INSECURE });
  }

  /** A data-API read with a proof for this request and token. */
  function readNotes(accessToken: string, dpop?: oauth.DPoPHandle): Promise<Response> {
    return getNotes(as.issuer, accessToken, { DPoP: dpop, ...INSECURE });
  }

  beforeAll(async () => {
    ({ nest, as, user } = await startWithUser());
  });
  afterAll(async () => {
    await nest?.close();
    await dropTestDatabase();
  });

  it('discovery lists the algorithms DPoP proofs may use (RFC 9449 §5.1)', () => {
    expect(as.dpop_signing_alg_values_supported).toEqual(expect.arrayContaining(['ES256', 'EdDSA', 'PS256']));
  });

  describe('a confidential client, code flow with an ES256 key', () => {
    let rp: Registered;
    let dpop: oauth.DPoPHandle;
    let tokens: oauth.TokenEndpointResponse;

    beforeAll(async () => {
      rp = await register();
      dpop = oauth.DPoP(rp.client, await oauth.generateKeyPair('ES256'));
      tokens = await codeFlow(rp, dpop);
    });

    it('gets a DPoP token (token_type DPoP) after one use_dpop_nonce round', () => {
      expect(tokens).toMatchObject({ access_token: expect.stringMatching(/^lk_at_/), token_type: 'dpop', refresh_token: expect.stringMatching(/^lk_rt_/) });
    });

    it('reads the data API with a proof made with the same key', async () => {
      const response = await readNotes(tokens.access_token, dpop);
      expect(response.status).toBe(200);
      expect(response.headers.get('dpop-nonce')).toEqual(expect.any(String));
    });

    it('the token sent as a bearer token (no key, no proof) is refused: what a thief holds is useless (RFC 9449 §7.2)', async () => {
      const error = await readNotes(tokens.access_token).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
      const { response, cause } = error as oauth.WWWAuthenticateChallengeError;
      expect(response.status).toBe(401);
      expect(cause[0]).toMatchObject({ scheme: 'bearer', parameters: { error: 'invalid_token' } });
    });

    it('the token with a proof made by another key is refused with invalid_dpop_proof', async () => {
      const thief = oauth.DPoP(rp.client, await oauth.generateKeyPair('ES256'));
      const error = await readNotes(tokens.access_token, thief).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
      expect((error as oauth.WWWAuthenticateChallengeError).cause[0]).toMatchObject({ scheme: 'dpop', parameters: { error: 'invalid_dpop_proof' } });
    });

    it('a refresh with a proof gives a new DPoP token; the confidential client\'s refresh token was not bound, so another key works (RFC 9449 §5)', async () => {
      const other = oauth.DPoP(rp.client, await oauth.generateKeyPair('EdDSA'));
      const refreshed = await refreshTokenGrant(as, rp.client, rp.auth, tokens.refresh_token!, { DPoP: other, ...INSECURE });
      expect(refreshed.token_type).toBe('dpop');
      expect((await readNotes(refreshed.access_token, other)).status).toBe(200);
      tokens = refreshed;
    });
  });

  describe('a public client', () => {
    let spa: Registered;
    let dpop: oauth.DPoPHandle;
    let tokens: oauth.TokenEndpointResponse;

    beforeAll(async () => {
      spa = await register({ isPublic: true });
      dpop = oauth.DPoP(spa.client, await oauth.generateKeyPair('ES256'));
      tokens = await codeFlow(spa, dpop);
    });

    it('gets a DPoP token and reads the data API with it', async () => {
      expect(tokens.token_type).toBe('dpop');
      expect((await readNotes(tokens.access_token, dpop)).status).toBe(200);
    });

    it('its refresh token is bound to the key: redeemed with another key, invalid_grant; nothing is rotated', async () => {
      const thief = oauth.DPoP(spa.client, await oauth.generateKeyPair('ES256'));
      const attempt = refreshTokenGrant(as, spa.client, spa.auth, tokens.refresh_token!, { DPoP: thief, ...INSECURE });
      await expect(attempt).rejects.toMatchObject({ error: 'invalid_grant' });
      const refreshed = await refreshTokenGrant(as, spa.client, spa.auth, tokens.refresh_token!, { DPoP: dpop, ...INSECURE });
      expect(refreshed).toMatchObject({ token_type: 'dpop', refresh_token: expect.stringMatching(/^lk_rt_/) });
    });
  });

  describe('client_credentials with a proof', () => {
    it('gets a DPoP-bound token of the client\'s own', async () => {
      const service = await register({ grantTypes: ['client_credentials'] as never, redirectUris: [] });
      const dpop = oauth.DPoP(service.client, await oauth.generateKeyPair('PS256'));
      const tokens = await clientCredentialsGrant(as, service.client, service.auth, new URLSearchParams({ scope: 'notes:read' }), { DPoP: dpop, ...INSECURE });
      expect(tokens).toMatchObject({ token_type: 'dpop', scope: 'notes:read' });
    });
  });

  describe('a client registered with dpop_bound_access_tokens (RFC 9449 §5.2)', () => {
    it('is refused a token without a proof (invalid_dpop_proof), and gets one with a proof', async () => {
      const strict = await register({ openId: { dpop_bound_access_tokens: true } });
      await expect(codeFlow(strict, undefined)).rejects.toMatchObject({ error: 'invalid_dpop_proof', status: 400 });
      const dpop = oauth.DPoP(strict.client, await oauth.generateKeyPair('ES256'));
      expect((await codeFlow(strict, dpop)).token_type).toBe('dpop');
    });
  });

  describe('the authorization code bound to the DPoP key (RFC 9449 §10)', () => {
    let rp: Registered;

    beforeAll(async () => {
      rp = await register();
    });

    /** PAR with the client's DPoP handle (the library then sends a proof to /par), sign-in, and the callback's parameters. */
    async function pushWithProof(dpop: oauth.DPoPHandle, extra: Record<string, string> = {}): Promise<{ params: URLSearchParams; verifier: string }> {
      const verifier = oauth.generateRandomCodeVerifier();
      const parameters = { response_type: 'code', redirect_uri: REDIRECT_URI, scope: 'notes:read', code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', ...extra };
      const pushed = await pushedAuthorization(as, rp.client, rp.auth, parameters, { DPoP: dpop, ...INSECURE });
      const url = authorizationUrl(as, { client_id: rp.client.client_id, request_uri: pushed.request_uri });
      return { params: oauth.validateAuthResponse(as, rp.client, await signIn(user, url), oauth.expectNoState), verifier };
    }

    const redeem = (params: URLSearchParams, verifier: string, dpop: oauth.DPoPHandle) => authorizationCodeGrant(as, rp.client, rp.auth, params, REDIRECT_URI, verifier, { DPoP: dpop, ...INSECURE });

    it('a proof sent with the push binds the code: redeemed with another key it is invalid_grant (§10.1), with the same key it works', async () => {
      const dpop = oauth.DPoP(rp.client, await oauth.generateKeyPair('ES256'));
      const thief = oauth.DPoP(rp.client, await oauth.generateKeyPair('ES256'));
      const stolen = await pushWithProof(dpop);
      await expect(redeem(stolen.params, stolen.verifier, thief)).rejects.toMatchObject({ error: 'invalid_grant' });
      const honest = await pushWithProof(dpop);
      expect((await redeem(honest.params, honest.verifier, dpop)).token_type).toBe('dpop');
    });

    it('dpop_jkt that disagrees with the push\'s proof is refused at /par with invalid_dpop_proof', async () => {
      const dpop = oauth.DPoP(rp.client, await oauth.generateKeyPair('ES256'));
      const other = await oauth.DPoP(rp.client, await oauth.generateKeyPair('ES256')).calculateThumbprint();
      await expect(pushWithProof(dpop, { dpop_jkt: other })).rejects.toMatchObject({ error: 'invalid_dpop_proof', status: 400 });
    });

    it('dpop_jkt at /authorize binds the code too; a malformed one is invalid_request to the client', async () => {
      const dpop = oauth.DPoP(rp.client, await oauth.generateKeyPair('ES256'));
      const verifier = oauth.generateRandomCodeVerifier();
      const url = authorizationUrl(as, { client_id: rp.client.client_id, response_type: 'code', redirect_uri: REDIRECT_URI, scope: 'notes:read', code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', dpop_jkt: await dpop.calculateThumbprint() });
      const params = oauth.validateAuthResponse(as, rp.client, await signIn(user, url), oauth.expectNoState);
      const thief = oauth.DPoP(rp.client, await oauth.generateKeyPair('ES256'));
      await expect(redeem(params, verifier, thief)).rejects.toMatchObject({ error: 'invalid_grant' });

      url.searchParams.set('dpop_jkt', 'not-a-thumbprint');
      const refused = await signIn(user, url);
      expect(refused.searchParams.get('error')).toBe('invalid_request');
    });
  });
});
