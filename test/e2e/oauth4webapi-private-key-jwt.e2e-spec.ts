/**
 * private_key_jwt client authentication (RFC 7523 §2.2, OpenID Connect Core §9) through
 * oauth4webapi (v3), unmodified, over real HTTP: the library signs a fresh client assertion (iss
 * and sub the client_id, aud the issuer, a short exp, a random jti) for every request, at every
 * endpoint that authenticates clients: token (code flow and client_credentials), PAR, revocation
 * and introspection. One client registered its key set inline (jwks), another serves it at a
 * jwks_uri, from a server on loopback (tests allow private networks; production refuses them).
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oauth from 'oauth4webapi';
import type { NewClient } from '../../src/clients/client-information.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { authorizationUrl, startWithUser } from '../helpers/oauth4webapi.js';
import { signIn } from '../helpers/oauth-flow.js';
import type { TestUser } from '../helpers/test-app.js';
import { dropTestDatabase } from '../helpers/test-database.js';

const REDIRECT_URI = 'http://127.0.0.1:9/callback';
const INSECURE = { [oauth.allowInsecureRequests]: true } as const;

interface KeyClient {
  client: oauth.Client;
  auth: oauth.ClientAuth;
}

describe('private_key_jwt through oauth4webapi (RFC 7523)', () => {
  let nest: NestFastifyApplication;
  let as: oauth.AuthorizationServer;
  let user: TestUser;
  let jwksServer: Server;
  /** What the jwks_uri server serves; tests replace it to rotate keys. */
  let served: { keys: object[] } = { keys: [] };
  let jwksFetches = 0;

  /** A client whose key pair is ES256 (or `alg`); the public half registered inline or at the jwks_uri. */
  async function register(where: 'jwks' | 'jwks_uri', options: Partial<NewClient> = {}, alg = 'ES256'): Promise<KeyClient & { publicJwk: object }> {
    const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
    const publicJwk = { ...(await exportJWK(publicKey)), kid: `key-${Date.now().toString(36)}`, alg, use: 'sig' };
    if (where === 'jwks_uri') served = { keys: [publicJwk] };
    const keys: NewClient['keys'] = where === 'jwks' ? { jwks: { keys: [publicJwk as never] } } : { jwks_uri: `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/jwks.json` };
    const { client, secret } = await nest.get(ClientsService).create({
      name: 'oauth4webapi private_key_jwt',
      redirectUris: [REDIRECT_URI],
      scope: 'notes:read tokens:introspect',
      grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'] as never,
      tokenEndpointAuthMethod: 'private_key_jwt',
      keys,
      ...options,
    });
    expect(secret).toBeUndefined();
    return { client: { client_id: client.id }, auth: oauth.PrivateKeyJwt({ key: privateKey as never, kid: publicJwk.kid }), publicJwk };
  }

  async function clientCredentials({ client, auth }: KeyClient): Promise<oauth.TokenEndpointResponse> {
    const response = await oauth.clientCredentialsGrantRequest(as, client, auth, new URLSearchParams({ scope: 'notes:read' }), INSECURE);
    return oauth.processClientCredentialsResponse(as, client, response).catch((error: unknown) => {
      if (error instanceof oauth.ResponseBodyError) throw Object.assign(new Error(`${error.error}: ${error.error_description}`), { error: error.error, status: error.status });
      throw error;
    });
  }

  beforeAll(async () => {
    jwksServer = createServer((request, response) => {
      jwksFetches++;
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(served));
    });
    await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
    ({ nest, as, user } = await startWithUser());
  });
  afterAll(async () => {
    await nest?.close();
    await new Promise((resolve) => jwksServer?.close(resolve));
    await dropTestDatabase();
  });

  it('discovery offers private_key_jwt at every endpoint that authenticates clients, with asymmetric algorithms only', () => {
    expect(as.token_endpoint_auth_methods_supported).toContain('private_key_jwt');
    expect(as.revocation_endpoint_auth_methods_supported).toContain('private_key_jwt');
    expect(as.introspection_endpoint_auth_methods_supported).toContain('private_key_jwt');
    expect(as.token_endpoint_auth_signing_alg_values_supported).toEqual(expect.arrayContaining(['ES256', 'PS256', 'EdDSA']));
    expect(as.token_endpoint_auth_signing_alg_values_supported).not.toContain('HS256');
  });

  describe('a client that registered its keys inline (jwks)', () => {
    let rp: KeyClient;

    beforeAll(async () => {
      rp = await register('jwks');
    });

    it('completes a code flow with PAR: the push and the code redemption each authenticate with a fresh assertion', async () => {
      const verifier = oauth.generateRandomCodeVerifier();
      const state = oauth.generateRandomState();
      const parameters = { response_type: 'code', redirect_uri: REDIRECT_URI, scope: 'notes:read', state, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' };
      const pushed = await oauth.processPushedAuthorizationResponse(as, rp.client, await oauth.pushedAuthorizationRequest(as, rp.client, rp.auth, parameters, INSECURE));
      const url = authorizationUrl(as, { client_id: rp.client.client_id, request_uri: pushed.request_uri });
      const params = oauth.validateAuthResponse(as, rp.client, await signIn(user, url), state);
      const tokens = await oauth.processAuthorizationCodeResponse(as, rp.client, await oauth.authorizationCodeGrantRequest(as, rp.client, rp.auth, params, REDIRECT_URI, verifier, INSECURE));
      expect(tokens).toMatchObject({ access_token: expect.stringMatching(/^lk_at_/), refresh_token: expect.stringMatching(/^lk_rt_/), scope: 'notes:read' });
      const refreshed = await oauth.processRefreshTokenResponse(as, rp.client, await oauth.refreshTokenGrantRequest(as, rp.client, rp.auth, tokens.refresh_token!, INSECURE));
      expect(refreshed.access_token).toMatch(/^lk_at_/);
    });

    it('gets a client_credentials token, introspects it and revokes it', async () => {
      const { access_token: token } = await clientCredentials(rp);
      const introspected = await oauth.processIntrospectionResponse(as, rp.client, await oauth.introspectionRequest(as, rp.client, rp.auth, token, INSECURE));
      expect(introspected).toMatchObject({ active: true, client_id: rp.client.client_id, scope: 'notes:read' });
      const revoked = await oauth.revocationRequest(as, rp.client, rp.auth, token, INSECURE);
      await expect(oauth.processRevocationResponse(revoked)).resolves.toBeUndefined();
      const after = await oauth.processIntrospectionResponse(as, rp.client, await oauth.introspectionRequest(as, rp.client, rp.auth, token, INSECURE));
      expect(after.active).toBe(false);
    });

    it('an assertion signed by another key is invalid_client', async () => {
      const { privateKey } = await generateKeyPair('ES256');
      const forged = { ...rp, auth: oauth.PrivateKeyJwt(privateKey as never) };
      await expect(clientCredentials(forged)).rejects.toMatchObject({ error: 'invalid_client', status: 401 });
    });
  });

  describe('a client that pinned EdDSA or Ed25519 (RFC 9864: two names for one algorithm with an Ed25519 key)', () => {
    it.each(['EdDSA', 'Ed25519'])('pinned %s: oauth4webapi (signing as Ed25519) and an assertion signed as EdDSA both authenticate', async (pin) => {
      const { publicKey, privateKey } = await generateKeyPair('Ed25519', { extractable: true });
      const kid = `ed-${pin}`;
      const { client } = await nest.get(ClientsService).create({
        name: `pinned ${pin}`,
        redirectUris: [REDIRECT_URI],
        scope: 'notes:read',
        grantTypes: ['client_credentials'] as never,
        tokenEndpointAuthMethod: 'private_key_jwt',
        keys: { jwks: { keys: [{ ...(await exportJWK(publicKey)), kid, use: 'sig' } as never] }, token_endpoint_auth_signing_alg: pin },
      });
      const rp = { client: { client_id: client.id }, auth: oauth.PrivateKeyJwt({ key: privateKey as never, kid }) };
      await expect(clientCredentials(rp)).resolves.toMatchObject({ access_token: expect.stringMatching(/^lk_at_/) });

      const assertion = await new SignJWT({ jti: randomUUID() }).setProtectedHeader({ alg: 'EdDSA', kid }).setIssuer(client.id).setSubject(client.id).setAudience(as.issuer).setIssuedAt().setExpirationTime('1m').sign(privateKey);
      const form = { grant_type: 'client_credentials', scope: 'notes:read', client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: assertion };
      const answer = await fetch(as.token_endpoint!, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });
      expect(answer.status).toBe(200);
    });

    it('the pin still refuses every other algorithm: pinned EdDSA, an ES256 assertion from a registered ES256 key → invalid_client', async () => {
      const ed = await generateKeyPair('Ed25519', { extractable: true });
      const ec = await generateKeyPair('ES256', { extractable: true });
      const { client } = await nest.get(ClientsService).create({
        name: 'pinned EdDSA, two keys',
        redirectUris: [REDIRECT_URI],
        scope: 'notes:read',
        grantTypes: ['client_credentials'] as never,
        tokenEndpointAuthMethod: 'private_key_jwt',
        keys: { jwks: { keys: [{ ...(await exportJWK(ed.publicKey)), kid: 'ed', use: 'sig' }, { ...(await exportJWK(ec.publicKey)), kid: 'ec', use: 'sig' }] as never }, token_endpoint_auth_signing_alg: 'EdDSA' },
      });
      const rp = { client: { client_id: client.id }, auth: oauth.PrivateKeyJwt({ key: ec.privateKey as never, kid: 'ec' }) };
      await expect(clientCredentials(rp)).rejects.toMatchObject({ error: 'invalid_client', status: 401 });
    });
  });

  describe('a client that serves its keys at a jwks_uri', () => {
    let rp: KeyClient;

    beforeAll(async () => {
      rp = await register('jwks_uri', {}, 'EdDSA');
    });

    it('authenticates; the key set is fetched once and then served from the cache', async () => {
      const before = jwksFetches;
      await clientCredentials(rp);
      await clientCredentials(rp);
      await clientCredentials(rp);
      expect(jwksFetches - before).toBe(1);
    });
  });
});
