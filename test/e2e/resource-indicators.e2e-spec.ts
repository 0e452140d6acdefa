/**
 * Resource indicators (RFC 8707) over real HTTP, with oauth4webapi where a stock client sends them:
 * `resource` at /authorize, /par and /token restricts a token's audience to the resources named;
 * the token endpoint may narrow, never widen, what the authorization named (§2.2); unknown or
 * malformed resources are invalid_target; Latchkey's own APIs are the resource named by the
 * issuer, and its data API refuses a token restricted to another resource. Introspection reports aud,
 * and shows a restricted token only to the client its resource server introspects with (RFC 7662 §2.2).
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import type { DataSource } from 'typeorm';
import { ClientsService } from '../../src/clients/clients.service.js';
import { ResourceServersService } from '../../src/resource-servers/resource-servers.service.js';
import { Token } from '../../src/tokens/token.entity.js';
import { UsersService } from '../../src/users/users.service.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { Browser } from '../helpers/browser.js';
import { authorizeAsUser } from '../helpers/oauth-flow.js';
import type { TestUser } from '../helpers/test-app.js';
import { dropTestDatabase } from '../helpers/test-database.js';

const REDIRECT_URI = 'http://127.0.0.1:9/callback';
const INSECURE = { [oauth.allowInsecureRequests]: true } as const;
const REPORTS = 'https://reports.example.com/api';
const BILLING = 'https://billing.example.com/';
/** A resource server registered for RFC 9068 JWT access tokens. */
const LEDGER = 'https://ledger.example.com/v2';

describe('Resource indicators (RFC 8707)', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  let as: oauth.AuthorizationServer;
  let user: TestUser;
  let userId: string;
  let rp: { client: oauth.Client; auth: oauth.ClientAuth };
  let introspector: { client: oauth.Client; auth: oauth.ClientAuth };
  /** Latchkey's own APIs as a resource: the issuer identifier. */
  let self: string;

  const tokenRows = (): Promise<number> => nest.get<DataSource>(getDataSourceToken()).getRepository(Token).count();

  /** Sign-in and consent with `resource` values in the authorization request; the code's callback parameters. */
  async function authorize(resources: string[], extra: Record<string, string> = {}): Promise<{ params: URLSearchParams; verifier: string } | { error: string | null }> {
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(as.authorization_endpoint!);
    for (const [name, value] of Object.entries({ client_id: rp.client.client_id, response_type: 'code', redirect_uri: REDIRECT_URI, scope: 'notes:read', code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', ...extra })) {
      url.searchParams.set(name, value);
    }
    for (const resource of resources) url.searchParams.append('resource', resource);
    const page = await authorizeAsUser(new Browser(url.origin), user, url.href);
    const callback = new URL(page.location!);
    if (callback.searchParams.has('error')) return { error: callback.searchParams.get('error') };
    return { params: oauth.validateAuthResponse(as, rp.client, callback, oauth.expectNoState), verifier };
  }

  async function redeem(params: URLSearchParams, verifier: string, resources: string[] = []): Promise<oauth.TokenEndpointResponse> {
    const additionalParameters = new URLSearchParams(resources.map((resource): [string, string] => ['resource', resource]));
    const response = await oauth.authorizationCodeGrantRequest(as, rp.client, rp.auth, params, REDIRECT_URI, verifier, { additionalParameters, ...INSECURE });
    return oauth.processAuthorizationCodeResponse(as, rp.client, response);
  }

  /** What /introspect tells `caller` (a client registered with tokens:introspect) about `token`. */
  async function introspect(caller: { client: oauth.Client; auth: oauth.ClientAuth }, token: string): Promise<Record<string, unknown>> {
    const response = await oauth.introspectionRequest(as, caller.client, caller.auth, token, INSECURE);
    return (await oauth.processIntrospectionResponse(as, caller.client, response)) as Record<string, unknown>;
  }

  /** The token's aud, as the resource servers' introspector sees it. */
  const audienceOf = async (token: string): Promise<unknown> => (await introspect(introspector, token)).aud;

  const readNotes = (token: string): Promise<Response> => fetch(new URL('/api/v1/notes', issuer), { headers: { authorization: `Bearer ${token}` } });

  beforeAll(async () => {
    ({ nest, issuer } = await startAtIssuer());
    self = issuer.href.replace(/\/$/, '');
    user = { username: `alice_${Date.now().toString(36)}`, password: 'correct horse battery staple' };
    userId = (await nest.get(UsersService).create(user.username, user.password)).id;
    const clients = nest.get(ClientsService);
    const created = await clients.create({ name: 'RP', redirectUris: [REDIRECT_URI], scope: 'notes:read', grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'] as never });
    rp = { client: { client_id: created.client.id }, auth: oauth.ClientSecretBasic(created.secret!) };
    // The client the registered resource servers introspect with (RFC 7662 §2.2: only it sees their tokens).
    const rs = await clients.create({ name: 'introspector', redirectUris: [], scope: 'tokens:introspect', grantTypes: ['client_credentials'] as never });
    introspector = { client: { client_id: rs.client.id }, auth: oauth.ClientSecretBasic(rs.secret!) };
    const servers = nest.get(ResourceServersService);
    await servers.register({ uri: REPORTS, name: 'Reports', introspector: rs.client.id }, 'test');
    await servers.register({ uri: BILLING, name: 'Billing', introspector: rs.client.id }, 'test');
    await servers.register({ uri: LEDGER, name: 'Ledger', accessTokenFormat: 'jwt', introspector: rs.client.id }, 'test');
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...INSECURE }));
  });
  afterAll(async () => {
    await nest?.close();
    await dropTestDatabase();
  });

  it('without resource, a token is unrestricted (no aud) and opens the data API, as before', async () => {
    const authorized = await authorize([]);
    if ('error' in authorized) throw new Error(String(authorized.error));
    const tokens = await redeem(authorized.params, authorized.verifier);
    expect(await audienceOf(tokens.access_token)).toBeUndefined();
    expect((await readNotes(tokens.access_token)).status).toBe(200);
  });

  it('two resources at /authorize; the token request narrows to one: the access token is for it alone, and refused by the data API', async () => {
    const authorized = await authorize([REPORTS, BILLING]);
    if ('error' in authorized) throw new Error(String(authorized.error));
    const tokens = await redeem(authorized.params, authorized.verifier, [REPORTS]);
    expect(await audienceOf(tokens.access_token)).toEqual([REPORTS]);
    const refused = await readNotes(tokens.access_token);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ error: 'invalid_token', error_description: expect.stringContaining('another resource') });
    // The refresh token keeps the whole grant: a refresh may narrow to the other one (§2.2).
    const refreshed = await oauth.processRefreshTokenResponse(as, rp.client, await oauth.refreshTokenGrantRequest(as, rp.client, rp.auth, tokens.refresh_token!, { additionalParameters: { resource: BILLING }, ...INSECURE }));
    expect(await audienceOf(refreshed.access_token)).toEqual([BILLING]);
  });

  it('the issuer names Latchkey\'s own APIs: a token for it opens the data API', async () => {
    const authorized = await authorize([self]);
    if ('error' in authorized) throw new Error(String(authorized.error));
    const tokens = await redeem(authorized.params, authorized.verifier);
    expect(await audienceOf(tokens.access_token)).toEqual([self]);
    expect((await readNotes(tokens.access_token)).status).toBe(200);
  });

  it('the token request cannot widen: a resource the authorization did not name is invalid_target, and no token is written', async () => {
    const authorized = await authorize([REPORTS]);
    if ('error' in authorized) throw new Error(String(authorized.error));
    const before = await tokenRows();
    await expect(redeem(authorized.params, authorized.verifier, [BILLING])).rejects.toMatchObject({ error: 'invalid_target', status: 400 });
    expect(await tokenRows()).toBe(before);
  });

  it('an unknown resource at /authorize is invalid_target, sent back to the client', async () => {
    expect(await authorize(['https://unknown.example.com/'])).toEqual({ error: 'invalid_target' });
  });

  it('a resource with a fragment, or a relative one, is invalid_target at /token (client_credentials)', async () => {
    for (const resource of [`${REPORTS}#x`, '/relative', 'not a uri']) {
      const response = await oauth.clientCredentialsGrantRequest(as, rp.client, rp.auth, new URLSearchParams({ resource }), INSECURE);
      await expect(oauth.processClientCredentialsResponse(as, rp.client, response)).rejects.toMatchObject({ error: 'invalid_target' });
    }
  });

  it('client_credentials with resource: a token for that resource', async () => {
    const response = await oauth.clientCredentialsGrantRequest(as, rp.client, rp.auth, new URLSearchParams([['resource', REPORTS], ['resource', BILLING]]), INSECURE);
    const tokens = await oauth.processClientCredentialsResponse(as, rp.client, response);
    expect(await audienceOf(tokens.access_token)).toEqual([REPORTS, BILLING]);
  });

  it('a pushed request carries its resources to the code (RFC 9126 with RFC 8707)', async () => {
    const verifier = oauth.generateRandomCodeVerifier();
    const parameters = new URLSearchParams({ response_type: 'code', redirect_uri: REDIRECT_URI, scope: 'notes:read', code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
    parameters.append('resource', REPORTS);
    parameters.append('resource', BILLING);
    const pushed = await oauth.processPushedAuthorizationResponse(as, rp.client, await oauth.pushedAuthorizationRequest(as, rp.client, rp.auth, parameters, INSECURE));
    const url = new URL(as.authorization_endpoint!);
    url.searchParams.set('client_id', rp.client.client_id);
    url.searchParams.set('request_uri', pushed.request_uri);
    const page = await authorizeAsUser(new Browser(url.origin), user, url.href);
    const params = oauth.validateAuthResponse(as, rp.client, new URL(page.location!), oauth.expectNoState);
    const tokens = await redeem(params, verifier);
    expect(await audienceOf(tokens.access_token)).toEqual([REPORTS, BILLING]);
  });

  describe('introspection per resource server (RFC 7662 §2.2, §4): a restricted token is active only to the client its resource introspects with', () => {
    /** Registered with another introspector, and without one. */
    const PAYROLL = 'https://payroll.example.com/';
    const ARCHIVE = 'https://archive.example.com/';
    let payrollIntrospector: { client: oauth.Client; auth: oauth.ClientAuth; id: string };
    let bystander: { client: oauth.Client; auth: oauth.ClientAuth };

    async function tokenFor(resources: string[]): Promise<string> {
      const response = await oauth.clientCredentialsGrantRequest(as, rp.client, rp.auth, new URLSearchParams(resources.map((resource): [string, string] => ['resource', resource])), INSECURE);
      return (await oauth.processClientCredentialsResponse(as, rp.client, response)).access_token;
    }
    const serverRows = (): Promise<number> => nest.get<DataSource>(getDataSourceToken()).query<{ n: number }[]>('SELECT COUNT(*) AS n FROM resource_servers').then((rows) => Number(rows[0].n));

    beforeAll(async () => {
      const clients = nest.get(ClientsService);
      const payroll = await clients.create({ name: 'payroll introspector', redirectUris: [], scope: 'tokens:introspect', grantTypes: ['client_credentials'] as never });
      payrollIntrospector = { id: payroll.client.id, client: { client_id: payroll.client.id }, auth: oauth.ClientSecretBasic(payroll.secret!) };
      const other = await clients.create({ name: 'introspector of no resource', redirectUris: [], scope: 'tokens:introspect', grantTypes: ['client_credentials'] as never });
      bystander = { client: { client_id: other.client.id }, auth: oauth.ClientSecretBasic(other.secret!) };
      await nest.get(ResourceServersService).register({ uri: PAYROLL, name: 'Payroll', introspector: payroll.client.id }, 'test');
      await nest.get(ResourceServersService).register({ uri: ARCHIVE, name: 'Archive' }, 'test');
    });

    it('a token for PAYROLL: active with its aud to Payroll\'s introspector, {"active": false} and nothing else to the introspector of other resources and to one of none', async () => {
      const token = await tokenFor([PAYROLL]);
      expect(await introspect(payrollIntrospector, token)).toMatchObject({ active: true, aud: [PAYROLL], client_id: rp.client.client_id });
      expect(await introspect(introspector, token)).toEqual({ active: false });
      expect(await introspect(bystander, token)).toEqual({ active: false });
    });

    it('a token for two resources is shown to the introspector of either; one for a resource with no introspector to nobody', async () => {
      const both = await tokenFor([PAYROLL, REPORTS]);
      expect(await introspect(payrollIntrospector, both)).toMatchObject({ active: true, aud: [PAYROLL, REPORTS] });
      expect(await introspect(introspector, both)).toMatchObject({ active: true, aud: [PAYROLL, REPORTS] });
      expect(await introspect(bystander, both)).toEqual({ active: false });
      const archived = await tokenFor([ARCHIVE]);
      for (const caller of [payrollIntrospector, introspector, bystander]) expect(await introspect(caller, archived)).toEqual({ active: false });
    });

    it('an unrestricted token, and one for Latchkey\'s own APIs (the issuer), are shown to every introspecting client, as before', async () => {
      for (const token of [await tokenFor([]), await tokenFor([self])]) {
        for (const caller of [payrollIntrospector, introspector, bystander]) expect(await introspect(caller, token)).toMatchObject({ active: true, client_id: rp.client.client_id });
      }
    });

    it('registering a resource server refuses an introspector that is unknown, public, or without tokens:introspect (invalid_resource), and writes nothing', async () => {
      const clients = nest.get(ClientsService);
      const publicClient = await clients.create({ name: 'public', redirectUris: [REDIRECT_URI], scope: 'notes:read', isPublic: true } as never);
      const before = await serverRows();
      for (const [introspectorId, message] of [
        ['no-such-client', /No client with the id "no-such-client"/],
        [publicClient.client.id, /cannot introspect: Introspection needs a confidential client registered with the tokens:introspect scope/],
        [rp.client.client_id, /cannot introspect/],
      ] as const) {
        await expect(nest.get(ResourceServersService).register({ uri: 'https://refused.example.com/', introspector: introspectorId }, 'test')).rejects.toMatchObject({ code: 'invalid_resource', message: expect.stringMatching(message) });
      }
      expect(await serverRows()).toBe(before);
    });
  });

  describe('JWT access tokens (RFC 9068) for a resource server registered for them', () => {
    const verifyOffline = (token: string) =>
      jwtVerify(token, createRemoteJWKSet(new URL(as.jwks_uri!)), { issuer: as.issuer, audience: LEDGER, typ: 'at+jwt', algorithms: ['RS256'] });

    it('a code flow with resource=LEDGER gets a JWT the resource server checks offline with the JWKS: typ at+jwt, sub, client_id, scope, jti, iat, exp, auth_time', async () => {
      const authorized = await authorize([LEDGER]);
      if ('error' in authorized) throw new Error(String(authorized.error));
      const tokens = await redeem(authorized.params, authorized.verifier);
      expect(tokens.token_type).toBe('bearer');
      const { payload, protectedHeader } = await verifyOffline(tokens.access_token);
      expect(protectedHeader).toMatchObject({ typ: 'at+jwt', alg: 'RS256', kid: expect.any(String) });
      expect(payload).toMatchObject({ iss: as.issuer, aud: LEDGER, sub: userId, client_id: rp.client.client_id, scope: 'notes:read', jti: expect.any(String), auth_time: expect.any(Number) });
      expect(payload.exp! - payload.iat!).toBe(tokens.expires_in);
      // The same token is also what introspection knows, by its jti.
      expect(await audienceOf(tokens.access_token)).toEqual([LEDGER]);
    });

    it('client_credentials: sub is the client itself (§2.2)', async () => {
      const response = await oauth.clientCredentialsGrantRequest(as, rp.client, rp.auth, new URLSearchParams({ resource: LEDGER, scope: 'notes:read' }), INSECURE);
      const { payload } = await verifyOffline((await oauth.processClientCredentialsResponse(as, rp.client, response)).access_token);
      expect(payload).toMatchObject({ sub: rp.client.client_id, client_id: rp.client.client_id });
    });

    it('the trade-off: once revoked, introspection says inactive at once, but the JWT still verifies offline until it expires', async () => {
      const response = await oauth.clientCredentialsGrantRequest(as, rp.client, rp.auth, new URLSearchParams({ resource: LEDGER }), INSECURE);
      const token = (await oauth.processClientCredentialsResponse(as, rp.client, response)).access_token;
      await oauth.processRevocationResponse(await oauth.revocationRequest(as, rp.client, rp.auth, token, INSECURE));
      const introspected = await oauth.processIntrospectionResponse(as, introspector.client, await oauth.introspectionRequest(as, introspector.client, introspector.auth, token, INSECURE));
      expect(introspected.active).toBe(false);
      await expect(verifyOffline(token)).resolves.toBeDefined();
    });

    it('the longest JWT access token we issue (ten resources of 2,000 characters in aud) is still introspected and revoked: the token parameter admits it', async () => {
      const servers = nest.get(ResourceServersService);
      const long = Array.from({ length: 10 }, (_, i) => `https://long-${i}.example.com/${'p'.repeat(1960)}`);
      for (const uri of long) await servers.register({ uri, name: `Long ${uri.slice(8, 14)}`, accessTokenFormat: 'jwt', introspector: introspector.client.client_id }, 'test');
      const response = await oauth.clientCredentialsGrantRequest(as, rp.client, rp.auth, new URLSearchParams(long.map((uri): [string, string] => ['resource', uri])), INSECURE);
      const token = (await oauth.processClientCredentialsResponse(as, rp.client, response)).access_token;
      expect(token.length).toBeGreaterThan(20_000);
      expect((await introspect(introspector, token)).active).toBe(true);
      await oauth.processRevocationResponse(await oauth.revocationRequest(as, rp.client, rp.auth, token, INSECURE));
      expect(await introspect(introspector, token)).toEqual({ active: false });
    });

    it('an opaque resource beside it: the token is still a JWT, its aud naming both', async () => {
      const response = await oauth.clientCredentialsGrantRequest(as, rp.client, rp.auth, new URLSearchParams([['resource', LEDGER], ['resource', REPORTS]]), INSECURE);
      const token = (await oauth.processClientCredentialsResponse(as, rp.client, response)).access_token;
      const { payload } = await jwtVerify(token, createRemoteJWKSet(new URL(as.jwks_uri!)), { typ: 'at+jwt' });
      expect(payload.aud).toEqual([LEDGER, REPORTS]);
    });
  });
});
