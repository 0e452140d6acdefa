/**
 * The FAPI 2.0 Security Profile (OpenID Foundation, final) switch, end to end over real HTTP:
 * - a client registered with security_profile "fapi2" completes the profile's flow through
 *   oauth4webapi (v3), unmodified: PAR authenticated with private_key_jwt and carrying PKCE S256,
 *   the browser sent with client_id and request_uri only, the callback's iss checked (RFC 9207),
 *   the code redeemed with a DPoP proof, a DPoP-bound data API read, a refresh with DPoP;
 * - a registration that does not meet the profile is refused, listing what is wrong, and writes
 *   nothing; at runtime everything the profile forbids is refused (§5.3.2.1, §5.3.2.2): a request
 *   not pushed, a push without PKCE or client authentication, a token request without DPoP, a
 *   client assertion whose aud is not the issuer as a string, a code older than 60 seconds, a DPoP
 *   proof signed RS256 (§5.4.1);
 * - the client cannot leave the profile with its own registration access token;
 * - with FAPI2_REQUIRED=true (a second app on the same database, last) the metadata offers only
 *   what the profile allows, registration holds every client to it, a client_secret_basic
 *   client registered before the switch can no longer authenticate, and the data API refuses
 *   DPoP proofs in algorithms other than §5.4.1's.
 */
import { jest } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import { decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { randomUUID, webcrypto } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import type { DataSource } from 'typeorm';
import { AuditService } from '../../src/audit/audit.service.js';
import { Client } from '../../src/clients/client.entity.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import type { PublicJwk } from '../../src/clients/client-keys.js';
import { FAPI2_CODE_TTL_SECONDS } from '../../src/clients/security-profile.js';
import { AuthorizationCode } from '../../src/codes/authorization-code.entity.js';
import { Clock } from '../../src/common/clock.js';
import { hashSecret } from '../../src/common/secrets.js';
import { Token } from '../../src/tokens/token.entity.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { Browser } from '../helpers/browser.js';
import { authorizationCodeGrant, clientCredentialsGrant, getNotes, refreshTokenGrant, withNonceRetry } from '../helpers/dpop.js';
import { authorizationUrl, prepareCodeRequest, startWithUser, type Prepared } from '../helpers/oauth4webapi.js';
import { authorizeAsUser, basicAuth } from '../helpers/oauth-flow.js';
import type { TestUser } from '../helpers/test-app.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { withEnv } from '../helpers/with-env.js';

const REDIRECT_URI = 'http://127.0.0.1:9/callback';
/** oauth4webapi refuses http:// unless told; we test over loopback. */
const INSECURE = { [oauth.allowInsecureRequests]: true } as const;
const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** What startAtIssuer and the FAPI2_REQUIRED app set in process.env; put back after this file. */
const ENV_NAMES = ['ISSUER', 'FAPI2_REQUIRED'] as const;

/** A private_key_jwt key: the public JWK a client registers, and the private key it signs with. */
interface SigningKey {
  kid: string;
  publicJwk: PublicJwk;
  privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
}

/** A client as oauth4webapi sees it, with what the test needs to act as it. */
interface Rp {
  id: string;
  client: oauth.Client;
  auth: oauth.ClientAuth;
  key: SigningKey;
}

interface Reply {
  status: number;
  json: Record<string, unknown>;
}

async function newSigningKey(): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const kid = `fapi-${randomUUID()}`;
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
  return { kid, publicJwk: publicJwk as unknown as PublicJwk, privateKey };
}

function rpOf(id: string, key: SigningKey): Rp {
  return { id, client: { client_id: id }, auth: oauth.PrivateKeyJwt({ key: key.privateKey as never, kid: key.kid }), key };
}

/** RFC 7591 metadata of a client that meets the profile; `change` replaces fields (undefined removes one). */
function fapiMetadata(key: SigningKey, change: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    client_name: 'FAPI 2.0 client',
    redirect_uris: [REDIRECT_URI],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    scope: 'notes:read',
    token_endpoint_auth_method: 'private_key_jwt',
    jwks: { keys: [key.publicJwk] },
    // §5.4.1: PS256, ES256 or EdDSA for every JWT, ID tokens included.
    id_token_signed_response_alg: 'ES256',
    security_profile: 'fapi2',
    require_pushed_authorization_requests: true,
    dpop_bound_access_tokens: true,
    ...change,
  };
}

/** What the client pushes (with PKCE S256, state and nonce) and keeps to check the answer. */
const prepare = (scope: string): Promise<Prepared> => prepareCodeRequest(REDIRECT_URI, scope);

/** A client assertion signed with the client's key, with the claims the test chooses (a fresh jti each time it is called). */
function assertionAuth(rp: Rp, claims: { aud: string | string[] }): oauth.ClientAuth {
  return async (_as, _client, body) => {
    const now = Math.floor(Date.now() / 1000);
    const assertion = await new SignJWT({ ...claims, jti: randomUUID() })
      .setProtectedHeader({ alg: 'ES256', kid: rp.key.kid })
      .setIssuer(rp.id)
      .setSubject(rp.id)
      .setIssuedAt(now)
      .setExpirationTime(now + 60)
      .sign(rp.key.privateKey);
    body.set('client_id', rp.id);
    body.set('client_assertion_type', JWT_BEARER);
    body.set('client_assertion', assertion);
  };
}

type DpopKeyPair = Awaited<ReturnType<typeof oauth.generateKeyPair>>;

/**
 * One RSA key as two WebCrypto key pairs with the same RFC 7638 thumbprint: for PS256, which
 * FAPI 2.0 §5.4.1 allows, and for RS256 (RSASSA-PKCS1-v1_5), which it does not.
 */
async function rsaKeyBothWays(): Promise<{ ps256: DpopKeyPair; rs256: DpopKeyPair }> {
  const ps256 = await oauth.generateKeyPair('PS256', { extractable: true });
  const algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
  const asRs256 = async (key: DpopKeyPair['privateKey'], usage: 'sign' | 'verify') => {
    const { key_ops: _ops, ...jwk } = await webcrypto.subtle.exportKey('jwk', key as webcrypto.CryptoKey);
    return webcrypto.subtle.importKey('jwk', { ...jwk, alg: 'RS256' }, algorithm, usage === 'verify', [usage]);
  };
  return { ps256, rs256: { privateKey: await asRs256(ps256.privateKey, 'sign'), publicKey: await asRs256(ps256.publicKey, 'verify') } as unknown as DpopKeyPair };
}

/** What a promise rejects with (the test fails if it resolves). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  const outcome = await promise.then(
    (value: unknown) => ({ resolved: value }),
    (error: unknown) => ({ error }),
  );
  if ('resolved' in outcome) throw new Error(`Expected a rejection, got ${JSON.stringify(outcome.resolved)}`);
  return outcome.error;
}

describe('FAPI 2.0 Security Profile', () => {
  const savedEnv: Partial<Record<(typeof ENV_NAMES)[number], string>> = {};
  /** A client_secret_basic client registered before FAPI2_REQUIRED, and whether it got a token then. */
  let legacy: { id: string; secret: string; statusBefore: number };
  /** A private_key_jwt client of the default profile registered before FAPI2_REQUIRED: no PAR, no DPoP asked of it, implicit and password allowed. */
  /** …and the refresh token of an OpenID grant it got before the switch (its ID tokens RS256, the default). */
  let legacyKeyClient: { id: string; key: SigningKey; openIdRefreshToken: string; openIdCode: { callback: URLSearchParams; verifier: string } };

  beforeAll(() => {
    for (const name of ENV_NAMES) savedEnv[name] = process.env[name];
  });
  afterAll(async () => {
    for (const name of ENV_NAMES) {
      if (savedEnv[name] === undefined) delete process.env[name];
      else process.env[name] = savedEnv[name];
    }
    await dropTestDatabase();
  });

  describe('a client registered with security_profile "fapi2"', () => {
    let nest: NestFastifyApplication;
    let issuer: URL;
    let as: oauth.AuthorizationServer;
    let user: TestUser;
    let userId: string;
    let adminToken: string;
    let rp: Rp;
    /** The FAPI client's registration access token (RFC 7592). */
    let rat: string;
    /** One browser: signed in and consented after the first flow, so later refusals are not the sign-in's. */
    let browser: Browser;

    const dataSource = (): DataSource => nest.get<DataSource>(getDataSourceToken());

    async function call(method: string, path: string, token: string, body?: unknown): Promise<Reply> {
      const response = await fetch(new URL(path, issuer), {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
    }

    /** The client's row as stored, every column. */
    async function row(id: string): Promise<Record<string, unknown>> {
      const placeholder = dataSource().options.type === 'postgres' ? '$1' : '?';
      const rows = await dataSource().query<Record<string, unknown>[]>(`SELECT * FROM "clients" WHERE "id" = ${placeholder}`, [id]);
      return rows[0];
    }

    const clientCount = (): Promise<number> => dataSource().getRepository(Client).count();
    const codesOf = (clientId: string): Promise<number> => dataSource().getRepository(AuthorizationCode).countBy({ clientId });
    const auditCount = async (): Promise<number> => (await nest.get(AuditService).list(1000)).length;

    async function push(parameters: Record<string, string>, auth = rp.auth): Promise<oauth.PushedAuthorizationResponse> {
      return oauth.processPushedAuthorizationResponse(as, rp.client, await oauth.pushedAuthorizationRequest(as, rp.client, auth, parameters, INSECURE));
    }

    /** The authorization endpoint with client_id and request_uri only, as FAPI 2.0 has clients send it (RFC 9126 §4). */
    const pushedUrl = (requestUri: string): URL => authorizationUrl(as, { client_id: rp.id, request_uri: requestUri });

    /** Push, then sign-in and consent in the browser: the validated callback parameters. */
    async function authorize(scope: string): Promise<{ prepared: Prepared; params: URLSearchParams; callback: URL; status: number }> {
      const prepared = await prepare(scope);
      const pushed = await push(prepared.parameters);
      const page = await authorizeAsUser(browser, user, pushedUrl(pushed.request_uri).href);
      if (!page.location) throw new Error(`Expected a redirect to the client, got ${page.status}:\n${page.body}`);
      const callback = new URL(page.location);
      return { prepared, callback, status: page.status, params: oauth.validateAuthResponse(as, rp.client, callback, prepared.state) };
    }

    /** The code redeemed with DPoP and the client's authentication (the library's own assertion unless told). */
    function redeem(params: URLSearchParams, prepared: Prepared, dpop: oauth.DPoPHandle | undefined, options: { client?: oauth.Client; auth?: oauth.ClientAuth } = {}): Promise<oauth.TokenEndpointResponse> {
      return authorizationCodeGrant(as, options.client ?? rp.client, options.auth ?? rp.auth, params, REDIRECT_URI, prepared.verifier, { DPoP: dpop, ...INSECURE });
    }

    function readNotes(accessToken: string, dpop?: oauth.DPoPHandle): Promise<Response> {
      return getNotes(as.issuer, accessToken, { DPoP: dpop, ...INSECURE });
    }

    beforeAll(async () => {
      ({ nest, issuer, as, user, userId } = await startWithUser());
      browser = new Browser(issuer.origin);

      const clients = nest.get(ClientsService);
      const admin = await clients.create({ name: 'admin', redirectUris: [], grantTypes: ['client_credentials'] as never, scope: 'clients:register' });
      const adminAnswer = await fetch(new URL('/token', issuer), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(admin.client.id, admin.secret!) },
        body: 'grant_type=client_credentials&scope=clients%3Aregister',
      });
      adminToken = ((await adminAnswer.json()) as { access_token: string }).access_token;

      // The FAPI client, registered by an administrator over RFC 7591 with its key set inline.
      const key = await newSigningKey();
      const registered = await call('POST', '/register', adminToken, fapiMetadata(key));
      if (registered.status !== 201) throw new Error(`Registration failed: ${JSON.stringify(registered.json)}`);
      rp = rpOf(registered.json.client_id as string, key);
      rat = registered.json.registration_access_token as string;

      // For the FAPI2_REQUIRED app below: a client_secret_basic client of today, which gets tokens now.
      const old = await clients.create({ name: 'registered before FAPI2_REQUIRED', redirectUris: [], grantTypes: ['client_credentials'] as never, scope: 'notes:read' });
      const before = await fetch(new URL('/token', issuer), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(old.client.id, old.secret!) },
        body: 'grant_type=client_credentials',
      });
      await before.arrayBuffer();
      legacy = { id: old.client.id, secret: old.secret!, statusBefore: before.status };
      const oldKey = await newSigningKey();
      const oldKeyClient = await clients.create({
        name: 'private_key_jwt, registered before FAPI2_REQUIRED',
        redirectUris: [REDIRECT_URI],
        grantTypes: ['authorization_code', 'refresh_token', 'client_credentials', 'implicit', 'password'] as never,
        // And OpenID Connect's response_type=id_token (issue 37), which the profile refuses too.
        responseTypes: ['code', 'token', 'id_token'],
        scope: 'notes:read',
        tokenEndpointAuthMethod: 'private_key_jwt' as never,
        keys: { jwks: { keys: [oldKey.publicJwk] } },
      });
      const legacyRp = rpOf(oldKeyClient.client.id, oldKey);
      const openId = await prepareCodeRequest(REDIRECT_URI, 'openid notes:read');
      const page = await authorizeAsUser(browser, user, authorizationUrl(as, { client_id: legacyRp.id, ...openId.parameters }).href);
      const callback = oauth.validateAuthResponse(as, legacyRp.client, new URL(page.location!), openId.state);
      const exchange = await oauth.authorizationCodeGrantRequest(as, legacyRp.client, legacyRp.auth, callback, REDIRECT_URI, openId.verifier, INSECURE);
      const openIdTokens = await oauth.processAuthorizationCodeResponse(as, legacyRp.client, exchange, { expectedNonce: openId.nonce });
      expect(oauth.getValidatedIdTokenClaims(openIdTokens)).toMatchObject({ aud: legacyRp.id });
      // And a code of an OpenID authorization, not yet redeemed when the switch comes.
      const pending = await prepareCodeRequest(REDIRECT_URI, 'openid notes:read');
      const pendingPage = await authorizeAsUser(browser, user, authorizationUrl(as, { client_id: legacyRp.id, ...pending.parameters }).href);
      const pendingCallback = oauth.validateAuthResponse(as, legacyRp.client, new URL(pendingPage.location!), pending.state);
      legacyKeyClient = { id: oldKeyClient.client.id, key: oldKey, openIdRefreshToken: openIdTokens.refresh_token!, openIdCode: { callback: pendingCallback, verifier: pending.verifier } };
    });
    afterEach(() => jest.restoreAllMocks());
    // The database is kept for the FAPI2_REQUIRED app; the file's afterAll drops it.
    afterAll(async () => nest?.close());

    it('completes the FAPI 2.0 flow through oauth4webapi: PAR (private_key_jwt, PKCE S256), sign-in and consent, iss checked, code redeemed with DPoP, a DPoP-bound read, a refresh with DPoP', async () => {
      const registration = await call('GET', `/register/${rp.id}`, rat);
      expect(registration.json).toMatchObject({
        token_endpoint_auth_method: 'private_key_jwt',
        security_profile: 'fapi2',
        require_pushed_authorization_requests: true,
        dpop_bound_access_tokens: true,
        grant_types: ['authorization_code', 'refresh_token'],
      });
      expect(registration.json.client_secret).toBeUndefined();

      // The push: authenticated with a fresh assertion whose aud is the issuer string; the request_uri lives under 600 s (§5.3.2.2 item 12).
      const prepared = await prepare('openid notes:read');
      const pushed = await push(prepared.parameters);
      expect(pushed.expires_in).toBeGreaterThan(0);
      expect(pushed.expires_in).toBeLessThan(600);

      // The browser carries client_id and request_uri only; after sign-in and consent it is sent back with 303 (§5.3.2.2 item 11).
      const page = await authorizeAsUser(browser, user, pushedUrl(pushed.request_uri).href);
      expect(page.status).toBe(303);
      const callback = new URL(page.location!);
      expect(callback.href.startsWith(`${REDIRECT_URI}?`)).toBe(true);
      // RFC 9207 (§5.3.2.2 item 7): iss in the response, which the library checks against the discovered issuer.
      expect(callback.searchParams.get('iss')).toBe(as.issuer);
      const params = oauth.validateAuthResponse(as, rp.client, callback, prepared.state);
      expect(params.get('code')).toMatch(/^lk_ac_/);

      // The code redeemed with a DPoP proof (after one use_dpop_nonce round) and a new assertion.
      const dpop = oauth.DPoP(rp.client, await oauth.generateKeyPair('ES256'));
      let tokenType: unknown;
      const tokens = await withNonceRetry(async () => {
        const response = await oauth.authorizationCodeGrantRequest(as, rp.client, rp.auth, params, REDIRECT_URI, prepared.verifier, { DPoP: dpop, ...INSECURE });
        tokenType = ((await response.clone().json()) as Record<string, unknown>).token_type;
        return oauth.processAuthorizationCodeResponse(as, rp.client, response, { expectedNonce: prepared.nonce, requireIdToken: true });
      });
      expect(tokenType).toBe('DPoP');
      expect(tokens).toMatchObject({ access_token: expect.stringMatching(/^lk_at_/), token_type: 'dpop', refresh_token: expect.stringMatching(/^lk_rt_/), id_token: expect.any(String) });
      expect(tokens.scope?.split(' ').sort()).toEqual(['notes:read', 'openid']);
      expect(oauth.getValidatedIdTokenClaims(tokens)).toMatchObject({ iss: as.issuer, aud: rp.id, sub: userId, nonce: prepared.nonce });
      expect(decodeProtectedHeader(tokens.id_token!).alg).toBe('ES256');

      // Sender-constrained (§5.3.2.1 item 4): the data API with a proof of the same key, never as a bearer token.
      expect((await readNotes(tokens.access_token, dpop)).status).toBe(200);
      const asBearer = await rejection(readNotes(tokens.access_token));
      expect(asBearer).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
      expect((asBearer as oauth.WWWAuthenticateChallengeError).response.status).toBe(401);

      // A refresh with DPoP: a new DPoP-bound token that reads the data API.
      const refreshed = await refreshTokenGrant(as, rp.client, rp.auth, tokens.refresh_token!, { DPoP: dpop, ...INSECURE });
      expect(refreshed).toMatchObject({ access_token: expect.stringMatching(/^lk_at_/), token_type: 'dpop' });
      expect(refreshed.access_token).not.toBe(tokens.access_token);
      expect((await readNotes(refreshed.access_token, dpop)).status).toBe(200);
    });

    describe('registrations that do not meet the profile: 400 invalid_client_metadata, nothing written', () => {
      let key: SigningKey;

      beforeAll(async () => {
        key = await newSigningKey();
      });

      it.each<[string, Record<string, unknown>, string[]]>([
        ['client_secret_basic', { token_endpoint_auth_method: 'client_secret_basic', jwks: undefined }, ["token_endpoint_auth_method must be 'private_key_jwt'"]],
        ['a public client', { token_endpoint_auth_method: 'none', jwks: undefined }, ["token_endpoint_auth_method must be 'private_key_jwt'"]],
        ['require_pushed_authorization_requests left out', { require_pushed_authorization_requests: undefined }, ['require_pushed_authorization_requests must be true']],
        ['require_pushed_authorization_requests false', { require_pushed_authorization_requests: false }, ['require_pushed_authorization_requests must be true']],
        ['dpop_bound_access_tokens left out', { dpop_bound_access_tokens: undefined }, ['dpop_bound_access_tokens must be true']],
        ['the password grant', { grant_types: ['authorization_code', 'refresh_token', 'password'] }, ['grant_types must not include password']],
        ['the implicit grant', { grant_types: ['authorization_code', 'implicit'], response_types: ['code', 'token'] }, ['grant_types must not include implicit']],
        // A MAC token cannot be DPoP-bound, so a MAC client leaves out dpop_bound_access_tokens: both are named.
        ['access_token_type mac', { access_token_type: 'mac', dpop_bound_access_tokens: undefined }, ["access_token_type must be 'bearer'", 'dpop_bound_access_tokens must be true']],
        [
          'everything at once',
          { token_endpoint_auth_method: 'client_secret_basic', jwks: undefined, grant_types: ['authorization_code', 'password'], require_pushed_authorization_requests: undefined, dpop_bound_access_tokens: false },
          ["token_endpoint_auth_method must be 'private_key_jwt'", 'grant_types must not include password', 'require_pushed_authorization_requests must be true', 'dpop_bound_access_tokens must be true'],
        ],
        ['an unknown security_profile', { security_profile: 'fapi1' }, ["Unsupported security_profile 'fapi1'"]],
        // §5.4.1: PS256, ES256 and EdDSA only; RS256 is Latchkey's default for ID tokens, so a FAPI client must choose.
        ['ID tokens signed with RS256 (the default)', { id_token_signed_response_alg: undefined }, ['id_token_signed_response_alg must be ES256 or EdDSA, not RS256']],
        ['client assertions pinned to RS256', { token_endpoint_auth_signing_alg: 'RS256' }, ['token_endpoint_auth_signing_alg must be PS256, ES256 or EdDSA, not RS256']],
      ])('refuses security_profile "fapi2" with %s, naming each problem', async (_case, change, problems) => {
        const [clientsBefore, auditBefore] = [await clientCount(), await auditCount()];
        const reply = await call('POST', '/register', adminToken, fapiMetadata(key, change));
        expect({ status: reply.status, error: reply.json.error }).toEqual({ status: 400, error: 'invalid_client_metadata' });
        for (const problem of problems) expect(reply.json.error_description).toContain(problem);
        if (!('security_profile' in change)) expect(reply.json.error_description).toContain("FAPI 2.0 Security Profile (security_profile is 'fapi2')");
        expect(reply.json.client_id).toBeUndefined();
        expect(await clientCount()).toBe(clientsBefore);
        expect(await auditCount()).toBe(auditBefore);
      });

      it('the same metadata with security_profile "default" is registered: the refusals above are the profile\'s', async () => {
        const reply = await call('POST', '/register', adminToken, fapiMetadata(key, { token_endpoint_auth_method: 'client_secret_basic', jwks: undefined, security_profile: 'default', require_pushed_authorization_requests: undefined, dpop_bound_access_tokens: undefined }));
        expect(reply.status).toBe(201);
        expect(reply.json).toMatchObject({ token_endpoint_auth_method: 'client_secret_basic', security_profile: 'default' });
      });
    });

    describe('what the profile refuses at runtime', () => {
      it('a plain /authorize, not pushed: invalid_request sent back to the redirect URI with state and iss, no code, even to a signed-in browser', async () => {
        const prepared = await prepare('notes:read');
        const url = authorizationUrl(as, { client_id: rp.id, ...prepared.parameters });
        const codesBefore = await codesOf(rp.id);
        const page = await browser.get(url.href);
        expect(page.status).toBe(302);
        const callback = new URL(page.location!);
        expect(callback.href.startsWith(`${REDIRECT_URI}?`)).toBe(true);
        expect(Object.fromEntries(callback.searchParams)).toMatchObject({ error: 'invalid_request', state: prepared.state, iss: as.issuer });
        expect(callback.searchParams.get('code')).toBeNull();
        const error = (() => {
          try {
            oauth.validateAuthResponse(as, rp.client, callback, prepared.state);
          } catch (e) {
            return e;
          }
          return undefined;
        })();
        expect(error).toBeInstanceOf(oauth.AuthorizationResponseError);
        expect(error).toMatchObject({ error: 'invalid_request' });
        expect(await codesOf(rp.id)).toBe(codesBefore);
      });

      it('a push without PKCE, or with a method other than S256: 400 invalid_request (§5.3.2.2 item 5)', async () => {
        const { parameters } = await prepare('notes:read');
        const { code_challenge: _challenge, code_challenge_method: _method, ...withoutPkce } = parameters;
        for (const attempt of [withoutPkce, { ...withoutPkce, code_challenge: oauth.generateRandomCodeVerifier(), code_challenge_method: 'plain' }]) {
          const error = await rejection(push(attempt));
          expect(error).toBeInstanceOf(oauth.ResponseBodyError);
          expect(error).toMatchObject({ error: 'invalid_request', status: 400 });
        }
      });

      it('a push without redirect_uri is refused even though the client registered only one (§5.3.2.2): 400 invalid_request', async () => {
        const { parameters } = await prepare('notes:read');
        const { redirect_uri: _redirect, ...withoutRedirect } = parameters;
        const error = await rejection(push(withoutRedirect));
        expect(error).toMatchObject({ error: 'invalid_request', status: 400, error_description: expect.stringContaining('redirect_uri') });
      });

      it('a client assertion with an iat more than 60 s ahead is refused; an nbf 8 s ahead is accepted (§5.3.2.1)', async () => {
        const { parameters } = await prepare('notes:read');
        const signed = (claims: Record<string, number>): oauth.ClientAuth => async (_as, _client, body) => {
          const now = Math.floor(Date.now() / 1000);
          const assertion = await new SignJWT({ aud: as.issuer, jti: randomUUID(), iat: now, exp: now + 120, ...claims })
            .setProtectedHeader({ alg: 'ES256', kid: rp.key.kid })
            .setIssuer(rp.id)
            .setSubject(rp.id)
            .sign(rp.key.privateKey);
          body.set('client_id', rp.id);
          body.set('client_assertion_type', JWT_BEARER);
          body.set('client_assertion', assertion);
        };
        const now = Math.floor(Date.now() / 1000);
        const early = await oauth.pushedAuthorizationRequest(as, rp.client, signed({ iat: now + 90 }), parameters, INSECURE);
        expect(early.status).toBe(401);
        expect(await early.json()).toMatchObject({ error: 'invalid_client', error_description: expect.stringContaining('iat') });
        const skewed = await oauth.pushedAuthorizationRequest(as, rp.client, signed({ nbf: now + 8 }), parameters, INSECURE);
        expect(skewed.status).toBe(201);
      });

      it('a push without client authentication: 401 invalid_client (§5.3.2.2 item 4)', async () => {
        const { parameters } = await prepare('notes:read');
        const response = await oauth.pushedAuthorizationRequest(as, rp.client, oauth.None(), parameters, INSECURE);
        expect(response.status).toBe(401);
        expect(await response.json()).toMatchObject({ error: 'invalid_client' });
      });

      it('a token request without a DPoP proof: 400 invalid_dpop_proof, and the code is still good for a request with one', async () => {
        const { params, prepared } = await authorize('notes:read');
        const error = await rejection(redeem(params, prepared, undefined));
        expect(error).toBeInstanceOf(oauth.ResponseBodyError);
        expect(error).toMatchObject({ error: 'invalid_dpop_proof', status: 400 });
        const tokens = await redeem(params, prepared, oauth.DPoP(rp.client, await oauth.generateKeyPair('ES256')));
        expect(tokens.token_type).toBe('dpop');
      });

      it('a token request with a DPoP proof signed RS256 (§5.4.1 allows PS256, ES256, EdDSA): 400 invalid_dpop_proof naming them, no token; PS256 with the same RSA key is accepted', async () => {
        const { params, prepared } = await authorize('notes:read');
        const { ps256, rs256 } = await rsaKeyBothWays();
        const tokensBefore = await dataSource().getRepository(Token).countBy({ clientId: rp.id });
        const error = await rejection(redeem(params, prepared, oauth.DPoP(rp.client, rs256)));
        expect(error).toBeInstanceOf(oauth.ResponseBodyError);
        expect(error).toMatchObject({ error: 'invalid_dpop_proof', status: 400, error_description: 'The DPoP proof must be signed with one of ES256, PS256, EdDSA, Ed25519' });
        expect(await dataSource().getRepository(Token).countBy({ clientId: rp.id })).toBe(tokensBefore);
        // The refused proof burned nothing: the code is redeemed with a PS256 proof of the same key.
        const tokens = await redeem(params, prepared, oauth.DPoP(rp.client, ps256));
        expect(tokens.token_type).toBe('dpop');
      });

      it('a client assertion whose aud is the token endpoint URL, or the issuer in an array: 401 invalid_client; the issuer as a string is accepted (§5.3.2.1 item 8)', async () => {
        const { params, prepared } = await authorize('notes:read');
        const dpop = oauth.DPoP(rp.client, await oauth.generateKeyPair('ES256'));
        for (const aud of [as.token_endpoint!, [as.issuer]]) {
          const error = await rejection(redeem(params, prepared, dpop, { auth: assertionAuth(rp, { aud }) }));
          expect(error).toBeInstanceOf(oauth.ResponseBodyError);
          expect({ aud, error: (error as oauth.ResponseBodyError).error, status: (error as oauth.ResponseBodyError).status }).toEqual({ aud, error: 'invalid_client', status: 401 });
          if (Array.isArray(aud)) expect((error as oauth.ResponseBodyError).error_description).toContain('single string (FAPI 2.0)');
        }
        // The refused requests consumed nothing: the same code, with the same hand-made assertion but aud the issuer string.
        const tokens = await redeem(params, prepared, dpop, { auth: assertionAuth(rp, { aud: as.issuer }) });
        expect(tokens.token_type).toBe('dpop');

        // The string rule is FAPI's: a private_key_jwt client of the default profile may send aud as a one-element array.
        const key = await newSigningKey();
        const { client } = await nest.get(ClientsService).create({ name: 'default profile', redirectUris: [], grantTypes: ['client_credentials'] as never, scope: 'notes:read', tokenEndpointAuthMethod: 'private_key_jwt' as never, keys: { jwks: { keys: [key.publicJwk] } } });
        const plain = rpOf(client.id, key);
        const response = await oauth.clientCredentialsGrantRequest(as, plain.client, assertionAuth(plain, { aud: [as.issuer] }), { scope: 'notes:read' }, INSECURE);
        expect((await oauth.processClientCredentialsResponse(as, plain.client, response)).token_type).toBe('bearer');
      });

      it('a code lives 60 s (§5.3.2.1 item 11): stored with expires_at = created_at + 60 s, refused with invalid_grant 61 s later, redeemed 59 s later', async () => {
        const clock = nest.get(Clock);
        const codeRow = (code: string): Promise<AuthorizationCode> => dataSource().getRepository(AuthorizationCode).findOneByOrFail({ codeHash: hashSecret(code) });
        /** A code issued with the server's clock held at a whole second, then presented `after` seconds later (the client's clock moved as much). */
        async function presentedAfter(after: number): Promise<oauth.TokenEndpointResponse> {
          const issuedAt = new Date(Math.floor(Date.now() / 1000) * 1000);
          jest.spyOn(clock, 'now').mockReturnValue(issuedAt);
          const { params, prepared } = await authorize('notes:read');
          const stored = await codeRow(params.get('code')!);
          expect({ createdAt: stored.createdAt.getTime(), expiresAt: stored.expiresAt.getTime() }).toEqual({ createdAt: issuedAt.getTime(), expiresAt: issuedAt.getTime() + FAPI2_CODE_TTL_SECONDS * 1000 });

          const later = new Date(issuedAt.getTime() + after * 1000);
          jest.spyOn(clock, 'now').mockReturnValue(later);
          // The client's assertion and DPoP proof are made at the moved time, so only the code's age differs.
          const client: oauth.Client = { ...rp.client, [oauth.clockSkew]: Math.round((later.getTime() - Date.now()) / 1000) };
          return redeem(params, prepared, oauth.DPoP(client, await oauth.generateKeyPair('ES256')), { client });
        }

        expect(FAPI2_CODE_TTL_SECONDS).toBe(60);
        const expired = await rejection(presentedAfter(61));
        expect(expired).toBeInstanceOf(oauth.ResponseBodyError);
        expect(expired).toMatchObject({ error: 'invalid_grant', status: 400, error_description: expect.stringContaining('expired') });
        await expect(presentedAfter(59)).resolves.toMatchObject({ token_type: 'dpop' });
      });
    });

    it('the client cannot leave the profile with its own registration access token: security_profile "default", or left out, is refused and nothing changes', async () => {
      const before = await row(rp.id);
      const auditBefore = await auditCount();
      for (const change of [{ security_profile: 'default' }, { security_profile: undefined }]) {
        const reply = await call('PUT', `/register/${rp.id}`, rat, { ...fapiMetadata(rp.key, change), client_id: rp.id });
        expect({ status: reply.status, error: reply.json.error }).toEqual({ status: 400, error: 'invalid_client_metadata' });
        expect(reply.json.error_description).toContain("security_profile is 'fapi2' and only an administrator can leave it");
      }
      expect(await row(rp.id)).toEqual(before);
      expect(await auditCount()).toBe(auditBefore);
      expect((await call('GET', `/register/${rp.id}`, rat)).json).toMatchObject({ security_profile: 'fapi2' });

      // What it may do: change its descriptive metadata, staying in the profile.
      const renamed = await call('PUT', `/register/${rp.id}`, rat, { ...fapiMetadata(rp.key, { client_name: 'FAPI 2.0 client, renamed' }), client_id: rp.id });
      expect(renamed.status).toBe(200);
      expect(renamed.json).toMatchObject({ client_name: 'FAPI 2.0 client, renamed', security_profile: 'fapi2' });
    });
  });

  // Runs last: a second app registers passport strategies again (one process-wide registry), and the first is closed by now.
  describe('FAPI2_REQUIRED=true: every client is held to the profile', () => {
    let nest: NestFastifyApplication;
    let issuer: URL;
    let as: oauth.AuthorizationServer;
    /** An administrator that meets the profile: private_key_jwt, a DPoP-bound clients:register token. */
    let admin: { rp: Rp; token: string; dpop: oauth.DPoPHandle };

    function register(body: Record<string, unknown>): Promise<Reply> {
      return withNonceRetry(async () => {
        const response = await oauth.protectedResourceRequest(admin.token, 'POST', new URL('/register', issuer), new Headers({ 'content-type': 'application/json' }), JSON.stringify(body), { DPoP: admin.dpop, ...INSECURE });
        return { status: response.status, json: (await response.json()) as Record<string, unknown> };
      });
    }

    beforeAll(async () => {
      // The same database as the app above: its clients were registered before the switch.
      ({ nest, issuer } = await withEnv({ FAPI2_REQUIRED: 'true' }, () => startAtIssuer()));
      as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...INSECURE }));

      const key = await newSigningKey();
      const { client } = await nest.get(ClientsService).create({
        name: 'FAPI admin',
        redirectUris: [],
        grantTypes: ['client_credentials'] as never,
        scope: 'clients:register',
        tokenEndpointAuthMethod: 'private_key_jwt' as never,
        keys: { jwks: { keys: [key.publicJwk] } },
        openId: { require_pushed_authorization_requests: true, dpop_bound_access_tokens: true, id_token_signed_response_alg: 'ES256' },
      });
      const rp = rpOf(client.id, key);
      const dpop = oauth.DPoP(rp.client, await oauth.generateKeyPair('ES256'));
      const tokens = await clientCredentialsGrant(as, rp.client, rp.auth, { scope: 'clients:register' }, { DPoP: dpop, ...INSECURE });
      expect(tokens.token_type).toBe('dpop');
      admin = { rp, token: tokens.access_token, dpop };
    });
    afterAll(async () => nest?.close());

    it('the metadata offers only what the profile allows: private_key_jwt, pushed requests required, response_type code, no implicit or password grant', async () => {
      const oauthDocument = (await (await fetch(new URL('/.well-known/oauth-authorization-server', issuer))).json()) as Record<string, unknown>;
      for (const metadata of [as as unknown as Record<string, unknown>, oauthDocument]) {
        expect(metadata).toMatchObject({
          token_endpoint_auth_methods_supported: ['private_key_jwt'],
          revocation_endpoint_auth_methods_supported: ['private_key_jwt'],
          introspection_endpoint_auth_methods_supported: ['private_key_jwt'],
          require_pushed_authorization_requests: true,
          response_types_supported: ['code'],
          code_challenge_methods_supported: ['S256'],
          authorization_response_iss_parameter_supported: true,
        });
        expect([...(metadata.grant_types_supported as string[])].sort()).toEqual(['authorization_code', 'client_credentials', 'refresh_token']);
        expect(metadata.token_endpoint_auth_signing_alg_values_supported).not.toContain('HS256');
        expect(metadata.dpop_signing_alg_values_supported).toEqual(expect.arrayContaining(['ES256', 'PS256', 'EdDSA']));
        // RFC 8414 §3.2: no claim with zero elements (no MAC tokens under the profile).
        expect(Object.entries(metadata).filter(([, value]) => Array.isArray(value) && value.length === 0)).toEqual([]);
        expect(metadata).not.toHaveProperty('mac_algorithms_supported');
      }
    });

    it('a client registered before the switch for RS256 ID tokens (the default) gets no OpenID authentication and no ID token (§5.4.1): unauthorized_client at /par, on refresh and for its code from before, nothing written or burned; without openid it is served', async () => {
      const rp = rpOf(legacyKeyClient.id, legacyKeyClient.key);
      const data = nest.get<DataSource>(getDataSourceToken());
      const message = 'The FAPI 2.0 Security Profile this client is held to allows ID tokens signed with ES256 or EdDSA only (section 5.4.1), and the client is registered for RS256: an administrator must change its id_token_signed_response_alg';
      // As it reaches the client: RFC 6749's character set spells the source's § out (src/common/error-description.ts).

      const openIdPush = await oauth.pushedAuthorizationRequest(as, rp.client, rp.auth, (await prepare('openid notes:read')).parameters, INSECURE);
      expect(openIdPush.status).toBe(400);
      expect(await openIdPush.json()).toEqual({ error: 'unauthorized_client', error_description: message });
      const plainPush = await oauth.pushedAuthorizationRequest(as, rp.client, rp.auth, (await prepare('notes:read')).parameters, INSECURE);
      expect(plainPush.status).toBe(201);
      await plainPush.arrayBuffer();

      // The OpenID grant it got before the switch: its refresh is refused before the token is rotated.
      const hash = hashSecret(legacyKeyClient.openIdRefreshToken);
      const before = await data.getRepository(Token).findOneByOrFail({ tokenHash: hash });
      const tokensBefore = await data.getRepository(Token).countBy({ clientId: rp.id });
      const dpop = oauth.DPoP(rp.client, await oauth.generateKeyPair('ES256'));
      const refused = await rejection(refreshTokenGrant(as, rp.client, rp.auth, legacyKeyClient.openIdRefreshToken, { DPoP: dpop, ...INSECURE }));
      expect(refused).toMatchObject({ error: 'unauthorized_client', status: 400, error_description: message });
      expect(await data.getRepository(Token).findOneByOrFail({ tokenHash: hash })).toEqual(before);
      expect(await data.getRepository(Token).countBy({ clientId: rp.id })).toBe(tokensBefore);

      // Its OpenID code from before the switch: refused before it is burned, no token written.
      const codeHash = hashSecret(legacyKeyClient.openIdCode.callback.get('code')!);
      const redeemed = await rejection(authorizationCodeGrant(as, rp.client, rp.auth, legacyKeyClient.openIdCode.callback, REDIRECT_URI, legacyKeyClient.openIdCode.verifier, { DPoP: dpop, ...INSECURE }));
      expect(redeemed).toMatchObject({ error: 'unauthorized_client', status: 400, error_description: message });
      expect((await data.getRepository(AuthorizationCode).findOneByOrFail({ codeHash })).consumedAt).toBeNull();
      expect(await data.getRepository(Token).countBy({ clientId: rp.id })).toBe(tokensBefore);
    });

    it('DPoP proofs are held to §5.4.1 everywhere: the metadata and the data API\'s challenges name only ES256, PS256 and EdDSA; RS256 is refused at /token and at the data API, PS256 with the same RSA key is accepted', async () => {
      const fapiAlgs = ['ES256', 'PS256', 'EdDSA', 'Ed25519'];
      const oauthDocument = (await (await fetch(new URL('/.well-known/oauth-authorization-server', issuer))).json()) as Record<string, unknown>;
      for (const metadata of [as as unknown as Record<string, unknown>, oauthDocument]) expect(metadata.dpop_signing_alg_values_supported).toEqual(fapiAlgs);
      const anonymous = await fetch(new URL('/api/v1/notes', issuer));
      await anonymous.arrayBuffer();
      expect(anonymous.headers.get('www-authenticate')).toBe(`Bearer realm="latchkey", DPoP algs="${fapiAlgs.join(' ')}", MAC`);

      const rp = rpOf(legacyKeyClient.id, legacyKeyClient.key);
      const { ps256, rs256 } = await rsaKeyBothWays();
      const tokensBefore = await nest.get<DataSource>(getDataSourceToken()).getRepository(Token).countBy({ clientId: rp.id });
      const refused = await rejection(clientCredentialsGrant(as, rp.client, rp.auth, { scope: 'notes:read' }, { DPoP: oauth.DPoP(rp.client, rs256), ...INSECURE }));
      expect(refused).toMatchObject({ error: 'invalid_dpop_proof', status: 400 });
      expect(await nest.get<DataSource>(getDataSourceToken()).getRepository(Token).countBy({ clientId: rp.id })).toBe(tokensBefore);

      // A token bound to the RSA key's thumbprint; proofs of it, PS256 then RS256, at the data API.
      const tokens = await clientCredentialsGrant(as, rp.client, rp.auth, { scope: 'notes:read' }, { DPoP: oauth.DPoP(rp.client, ps256), ...INSECURE });
      expect(tokens.token_type).toBe('dpop');
      // A client_credentials token has no owner: the data API answers 401 invalid_token once the proof holds, not invalid_dpop_proof.
      const withPs256 = await rejection(getNotes(as.issuer, tokens.access_token, { DPoP: oauth.DPoP(rp.client, ps256), ...INSECURE }));
      expect(withPs256).toMatchObject({ status: 401, cause: [expect.objectContaining({ scheme: 'dpop', parameters: expect.objectContaining({ error: 'invalid_token' }) })] });
      const withRs256 = await rejection(getNotes(as.issuer, tokens.access_token, { DPoP: oauth.DPoP(rp.client, rs256), ...INSECURE }));
      expect(withRs256).toMatchObject({
        status: 401,
        cause: [expect.objectContaining({ scheme: 'dpop', parameters: expect.objectContaining({ algs: fapiAlgs.join(' '), error: 'invalid_dpop_proof', error_description: `The DPoP proof must be signed with one of ${fapiAlgs.join(', ')}` }) })],
      });
    });

    it('registering a plain client_secret_basic client is refused, over /register and through ClientsService, naming the server-wide rule; a conforming one is registered', async () => {
      const clientsBefore = await nest.get<DataSource>(getDataSourceToken()).getRepository(Client).count();
      const plain = { client_name: 'plain', redirect_uris: [REDIRECT_URI], grant_types: ['authorization_code', 'refresh_token'], scope: 'notes:read', token_endpoint_auth_method: 'client_secret_basic' };
      const refused = await register(plain);
      expect({ status: refused.status, error: refused.json.error }).toEqual({ status: 400, error: 'invalid_client_metadata' });
      expect(refused.json.error_description).toContain('this server holds every client to the FAPI 2.0 Security Profile');
      expect(refused.json.error_description).toContain("token_endpoint_auth_method must be 'private_key_jwt'");
      await expect(nest.get(ClientsService).create({ name: 'plain', redirectUris: [REDIRECT_URI], scope: 'notes:read' })).rejects.toMatchObject({
        code: 'invalid_client_metadata',
        message: expect.stringContaining('this server holds every client to the FAPI 2.0 Security Profile'),
      });
      expect(await nest.get<DataSource>(getDataSourceToken()).getRepository(Client).count()).toBe(clientsBefore);

      // Without security_profile: the server's rule holds the client all the same.
      const conforming = await register(fapiMetadata(await newSigningKey(), { security_profile: undefined }));
      expect(conforming.status).toBe(201);
      expect(conforming.json).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt', require_pushed_authorization_requests: true, dpop_bound_access_tokens: true });
    });

    it('a client_secret_basic client registered before the switch is refused at /token with invalid_client naming FAPI 2.0', async () => {
      expect(legacy.statusBefore).toBe(200);
      const response = await fetch(as.token_endpoint!, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(legacy.id, legacy.secret) },
        body: 'grant_type=client_credentials',
      });
      expect(response.status).toBe(401);
      const body = (await response.json()) as Record<string, unknown>;
      expect(body.error).toBe('invalid_client');
      expect(body.error_description).toContain('FAPI 2.0');
      expect(body.access_token).toBeUndefined();
    });

    it('a private_key_jwt client registered before the switch, without PAR or DPoP and with implicit and password, is held to the profile all the same', async () => {
      const rp = rpOf(legacyKeyClient.id, legacyKeyClient.key);
      const prepared = await prepare('notes:read');

      // Its requests must be pushed: a plain /authorize is sent back with invalid_request and iss.
      const url = authorizationUrl(as, { client_id: rp.id, ...prepared.parameters });
      const page = await new Browser(issuer.origin).get(url.href);
      expect(page.status).toBe(302);
      expect(Object.fromEntries(new URL(page.location!).searchParams)).toMatchObject({ error: 'invalid_request', state: prepared.state, iss: as.issuer });

      // With PKCE.
      const { code_challenge: _challenge, code_challenge_method: _method, ...withoutPkce } = prepared.parameters;
      const unprotected = await oauth.pushedAuthorizationRequest(as, rp.client, rp.auth, withoutPkce, INSECURE);
      expect(unprotected.status).toBe(400);
      expect(await unprotected.json()).toMatchObject({ error: 'invalid_request' });
      const pushed = await oauth.processPushedAuthorizationResponse(as, rp.client, await oauth.pushedAuthorizationRequest(as, rp.client, rp.auth, prepared.parameters, INSECURE));
      expect(pushed.request_uri).toEqual(expect.any(String));

      // The code flow only (§5.3.2.2 item 1, §5.3.2.1 item 2): no implicit response, no password grant, whatever it was registered for.
      const implicit = await oauth.pushedAuthorizationRequest(as, rp.client, rp.auth, { response_type: 'token', redirect_uri: REDIRECT_URI, scope: 'notes:read', state: prepared.state }, INSECURE);
      expect(implicit.status).toBe(400);
      expect(await implicit.json()).toMatchObject({ error: 'unsupported_response_type' });
      const idToken = await oauth.pushedAuthorizationRequest(as, rp.client, rp.auth, { response_type: 'id_token', response_mode: 'form_post', redirect_uri: REDIRECT_URI, scope: 'openid', nonce: 'n-1', state: prepared.state }, INSECURE);
      expect(idToken.status).toBe(400);
      expect(await idToken.json()).toMatchObject({ error: 'unsupported_response_type', error_description: expect.stringContaining('FAPI 2.0') });
      const password = await oauth.genericTokenEndpointRequest(as, rp.client, rp.auth, 'password', { username: 'alice', password: 'correct horse battery staple', scope: 'notes:read' }, INSECURE);
      expect(password.status).toBe(400);
      expect(await password.json()).toMatchObject({ error: 'unauthorized_client', error_description: expect.stringContaining('FAPI 2.0') });

      // Its assertions name the issuer as a string.
      const arrayAud = await oauth.clientCredentialsGrantRequest(as, rp.client, assertionAuth(rp, { aud: [as.issuer] }), { scope: 'notes:read' }, INSECURE);
      expect(arrayAud.status).toBe(401);
      expect(await arrayAud.json()).toMatchObject({ error: 'invalid_client' });

      // Its tokens are DPoP-bound.
      const withoutProof = await rejection(oauth.processClientCredentialsResponse(as, rp.client, await oauth.clientCredentialsGrantRequest(as, rp.client, rp.auth, { scope: 'notes:read' }, INSECURE)));
      expect(withoutProof).toMatchObject({ error: 'invalid_dpop_proof', status: 400 });
      const dpop = oauth.DPoP(rp.client, await oauth.generateKeyPair('ES256'));
      const tokens = await clientCredentialsGrant(as, rp.client, rp.auth, { scope: 'notes:read' }, { DPoP: dpop, ...INSECURE });
      expect(tokens.token_type).toBe('dpop');
    });
  });
});
