/**
 * Threat: a token meant for one resource server is used at another (audience confusion, RFC 8707
 * §1, RFC 9700 §4.10.2 "access token privilege restriction"), a client widens at the token
 * endpoint what the person authorized (RFC 8707 §2.2), a resource indicator smuggles a relative
 * URI, a fragment, whitespace or a huge list (§2), a resource server deleted by the administrator
 * keeps receiving tokens, and a JWT access token (RFC 9068) is taken for an ID token, forged, or
 * loses its DPoP binding. Defences: ResourceIndicators (one check for /authorize, /par and
 * /token), the audience check of AccessTokenAuthenticator (Latchkey's own APIs are the resource
 * named by the issuer), JwtAccessTokens (typ at+jwt, RS256, cnf.jkt), tokens looked up by hash,
 * and the administrator's CLI (resources:register|list|delete), which refuses bad URIs and audits
 * every change. Everything over real HTTP against the real app; the CLI as a separate process on
 * the same database.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import { calculateJwkThumbprint, createRemoteJWKSet, decodeProtectedHeader, exportJWK, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import type { DataSource } from 'typeorm';
import { AuditEvent } from '../../src/audit/audit-event.entity.js';
import { Client } from '../../src/clients/client.entity.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { AuthorizationCode } from '../../src/codes/authorization-code.entity.js';
import { CodesService } from '../../src/codes/codes.service.js';
import { hashSecret } from '../../src/common/secrets.js';
import { PushedAuthorizationRequest } from '../../src/pushed-requests/pushed-request.entity.js';
import { ResourceServer } from '../../src/resource-servers/resource-server.entity.js';
import { ResourceServersService } from '../../src/resource-servers/resource-servers.service.js';
import { Token, TokenKind } from '../../src/tokens/token.entity.js';
import { UsersService } from '../../src/users/users.service.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { Browser } from '../helpers/browser.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { withNonceRetry } from '../helpers/dpop.js';
import { authorizeAsUser, newPkce, type Pkce } from '../helpers/oauth-flow.js';
import type { TestUser } from '../helpers/test-app.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { postForm, resourceParams, type FormClient, type FormReply } from '../helpers/form-post.js';

const REDIRECT_URI = 'http://127.0.0.1:9/callback';
const INSECURE = { [oauth.allowInsecureRequests]: true } as const;
/** Resource server A (opaque tokens). */
const REPORTS = 'https://reports.example.com/api';
/** Resource server B (opaque tokens). */
const BILLING = 'https://billing.example.com/';
/** A resource server registered for RFC 9068 JWT access tokens. */
const LEDGER = 'https://ledger.example.com/v2';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** A CLI call starts Nest (and may first rebuild dist/): allow it time. */
const CLI_TIMEOUT = 180_000;

type Registered = FormClient;
type Reply = FormReply;

/** The malformed resource values RFC 8707 §2 rules out, each as the list of `resource` parameters a request sends. */
const MALFORMED: [string, string[]][] = [
  ['a relative URI', ['/api/v1/notes']],
  ['a fragment', [`${REPORTS}#section`]],
  ['an empty fragment', [`${REPORTS}#`]],
  ['whitespace inside', ['https://reports.example.com/a b']],
  ['a trailing newline', [`${REPORTS}\n`]],
  ['11 values (more than 10)', Array.from({ length: 11 }, (_, i) => `https://r${i}.example.com/`)],
  ['a 2001-character URI', [`https://reports.example.com/${'a'.repeat(2001 - 'https://reports.example.com/'.length)}`]],
];

/** `jwt` with its payload changed by `change` and its header and signature kept. */
function tamperPayload(jwt: string, change: (payload: Record<string, unknown>) => void): string {
  const [header, payload, signature] = jwt.split('.');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
  change(claims);
  return [header, Buffer.from(JSON.stringify(claims)).toString('base64url'), signature].join('.');
}

/** A JSON body as an object; anything else under `text`. */
function parseBody(text: string): Record<string, unknown> {
  if (text === '') return {};
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { text };
  }
}


/** An audit event's subject for a resource server: its row id (a UUIDv7), never its URI, which may be longer than the column. */
const RESOURCE_SERVER_SUBJECT = /^resource_server:[0-9a-f-]{36}$/;
describe('resource indicators and JWT access tokens under attack (RFC 8707, RFC 9068)', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  /** Latchkey's own APIs as a resource: the issuer identifier. */
  let self: string;
  let as: oauth.AuthorizationServer;
  let user: TestUser;
  let userId: string;
  /** A confidential client for the code flow, refresh and client_credentials. */
  let rp: Registered;
  /** Registers and manages clients: a clients:register token of its own (client_credentials). */
  let admin: Registered;
  let introspector: Registered;
  /** A client whose access tokens are MAC tokens. */
  let macClient: Registered;

  const dataSource = (): DataSource => nest.get<DataSource>(getDataSourceToken());
  const count = (entity: typeof Token | typeof AuthorizationCode | typeof PushedAuthorizationRequest | typeof AuditEvent | typeof ResourceServer): Promise<number> =>
    dataSource().getRepository(entity).count();
  /** What the tables a refusal must leave alone hold now. */
  const written = async (): Promise<Record<string, number>> => ({
    tokens: await count(Token),
    codes: await count(AuthorizationCode),
    pushed: await count(PushedAuthorizationRequest),
    resourceServers: await count(ResourceServer),
  });

  const post = (path: string, form: [string, string][], client: Registered): Promise<Reply> => postForm(issuer, path, form, client);

  /** The person signs in and consents; the final redirect to the client's callback. */
  async function authorizeRedirect(resources: readonly string[], extra: Record<string, string> = {}): Promise<{ callback: URL; pkce: Pkce }> {
    const pkce = newPkce();
    const url = new URL('/authorize', issuer);
    for (const [name, value] of Object.entries({ client_id: rp.id, response_type: 'code', redirect_uri: REDIRECT_URI, scope: 'notes:read', state: 'st4te', code_challenge: pkce.challenge, code_challenge_method: 'S256', ...extra })) {
      url.searchParams.set(name, value);
    }
    for (const resource of resources) url.searchParams.append('resource', resource);
    const page = await authorizeAsUser(new Browser(url.origin), user, url.href);
    if (!page.location) throw new Error(`Expected a redirect, got ${page.status}:\n${page.body}`);
    return { callback: new URL(page.location), pkce };
  }

  /** A code whose authorization request named `resources`. */
  async function code(resources: readonly string[], extra: Record<string, string> = {}): Promise<{ code: string; pkce: Pkce }> {
    const { callback, pkce } = await authorizeRedirect(resources, extra);
    const value = callback.searchParams.get('code');
    if (!value) throw new Error(`No code in ${callback.href}`);
    return { code: value, pkce };
  }

  const redeem = (issued: { code: string; pkce: Pkce }, resources: readonly string[] = []): Promise<Reply> =>
    post('/token', [['grant_type', 'authorization_code'], ['code', issued.code], ['redirect_uri', REDIRECT_URI], ['code_verifier', issued.pkce.verifier], ...resourceParams(resources)], rp);

  const refresh = (refreshToken: string, resources: readonly string[] = []): Promise<Reply> =>
    post('/token', [['grant_type', 'refresh_token'], ['refresh_token', refreshToken], ...resourceParams(resources)], rp);

  const clientCredentials = (client: Registered, resources: readonly string[], scope?: string): Promise<Reply> =>
    post('/token', [['grant_type', 'client_credentials'], ...(scope ? [['scope', scope] as [string, string]] : []), ...resourceParams(resources)], client);

  /** Tokens from a code flow whose authorization request named `resources`, redeemed with `narrowTo`. */
  async function tokensFor(resources: readonly string[], narrowTo: readonly string[] = [], extra: Record<string, string> = {}): Promise<{ accessToken: string; refreshToken: string; body: Record<string, unknown> }> {
    const reply = await redeem(await code(resources, extra), narrowTo);
    if (reply.status !== 200) throw new Error(`/token answered ${reply.status}: ${JSON.stringify(reply.body)}`);
    return { accessToken: String(reply.body.access_token), refreshToken: String(reply.body.refresh_token), body: reply.body };
  }

  async function introspect(token: string): Promise<Record<string, unknown>> {
    const reply = await post('/introspect', [['token', token]], introspector);
    if (reply.status !== 200) throw new Error(`/introspect answered ${reply.status}: ${JSON.stringify(reply.body)}`);
    return reply.body;
  }

  async function bearerGet(path: string, token: string): Promise<Reply> {
    const response = await fetch(new URL(path, issuer), { headers: { authorization: `Bearer ${token}` } });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: parseBody(text) };
  }

  /** RFC 6750 §3.1: 401 invalid_token, in the body and in the Bearer challenge. */
  function expectInvalidToken(reply: Reply): void {
    expect({ status: reply.status, error: reply.body.error }).toEqual({ status: 401, error: 'invalid_token' });
    expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
  }

  function expectInvalidTarget(reply: Reply): void {
    expect({ status: reply.status, error: reply.body.error }).toEqual({ status: 400, error: 'invalid_target' });
    expect(reply.body.error_description).toEqual(expect.any(String));
  }

  const jwks = () => createRemoteJWKSet(new URL(as.jwks_uri!));

  beforeAll(async () => {
    ({ nest, issuer } = await startAtIssuer({ RATE_LIMIT_CLIENT_PER_MINUTE: '0', RATE_LIMIT_API_PER_MINUTE: '0' }));
    self = issuer.href.replace(/\/$/, '');
    user = { username: `mallory_${Date.now().toString(36)}`, password: 'correct horse battery staple' };
    userId = (await nest.get(UsersService).create(user.username, user.password)).id;
    const clients = nest.get(ClientsService);
    const create = async (...args: Parameters<ClientsService['create']>): Promise<Registered> => {
      const created = await clients.create(...args);
      return { id: created.client.id, secret: created.secret! };
    };
    rp = await create({ name: 'RP', redirectUris: [REDIRECT_URI], scope: 'notes:read', grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'] as never });
    admin = await create({ name: 'admin', redirectUris: [], scope: 'clients:register', grantTypes: ['client_credentials'] as never });
    introspector = await create({ name: 'introspector', redirectUris: [], scope: 'tokens:introspect', grantTypes: ['client_credentials'] as never });
    // The resource servers introspect with it: only it sees their tokens as active (RFC 7662 §2.2).
    const servers = nest.get(ResourceServersService);
    await servers.register({ uri: REPORTS, name: 'Reports', introspector: introspector.id }, 'test');
    await servers.register({ uri: BILLING, name: 'Billing', introspector: introspector.id }, 'test');
    await servers.register({ uri: LEDGER, name: 'Ledger', accessTokenFormat: 'jwt', introspector: introspector.id }, 'test');
    macClient = await create({ name: 'MAC client', redirectUris: [], scope: 'notes:read', grantTypes: ['client_credentials'] as never, accessTokenType: 'mac' as never });
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...INSECURE }));
  });
  afterAll(async () => {
    await nest?.close();
    await dropTestDatabase();
  });

  describe("RFC 8707 §2, RFC 9700 §4.10.2: a token restricted to another resource does not open Latchkey's own APIs", () => {
    it('the data API refuses a token for resource server A with invalid_token, and accepts one whose audience is (or includes) the issuer', async () => {
      const granted = await tokensFor([REPORTS, self], [REPORTS]);
      expect(await introspect(granted.accessToken)).toMatchObject({ active: true, aud: [REPORTS] });
      const refused = await bearerGet('/api/v1/notes', granted.accessToken);
      expectInvalidToken(refused);
      expect(refused.body.error_description).toContain('another resource');

      // The same grant, narrowed to the issuer on refresh: Latchkey's own APIs are that resource.
      const forSelf = await refresh(granted.refreshToken, [self]);
      expect(forSelf.status).toBe(200);
      expect(await introspect(String(forSelf.body.access_token))).toMatchObject({ aud: [self] });
      expect((await bearerGet('/api/v1/notes', String(forSelf.body.access_token))).status).toBe(200);

      // No resource on refresh: the whole grant, A and the issuer; the issuer is among them, so it opens.
      const both = await refresh(String(forSelf.body.refresh_token));
      expect(await introspect(String(both.body.access_token))).toMatchObject({ aud: [REPORTS, self] });
      expect((await bearerGet('/api/v1/notes', String(both.body.access_token))).status).toBe(200);
    });

    it('/userinfo (scope openid) refuses a token for resource server A, and answers for a token for the issuer (Core §5.3.3)', async () => {
      const forA = await tokensFor([REPORTS], [], { scope: 'openid notes:read' });
      expect(forA.body.id_token).toEqual(expect.any(String));
      expectInvalidToken(await bearerGet('/userinfo', forA.accessToken));
      const formPost = await fetch(new URL('/userinfo', issuer), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ access_token: forA.accessToken }).toString() });
      expect(formPost.status).toBe(401);

      const forSelf = await tokensFor([self], [], { scope: 'openid notes:read' });
      const answered = await bearerGet('/userinfo', forSelf.accessToken);
      expect(answered.status).toBe(200);
      expect(answered.body.sub).toEqual(expect.any(String));
    });

    it('registration management (RFC 7592) refuses an administrator\'s clients:register token restricted to A, and accepts it restricted to the issuer', async () => {
      const forA = await clientCredentials(admin, [REPORTS], 'clients:register');
      expect(forA.status).toBe(200);
      expect(await introspect(String(forA.body.access_token))).toMatchObject({ active: true, scope: 'clients:register', aud: [REPORTS] });
      expectInvalidToken(await bearerGet(`/register/${rp.id}`, String(forA.body.access_token)));
      // POST /register (RFC 7591) with it writes no client either.
      const clientsBefore = await dataSource().getRepository(Client).count();
      const registration = await fetch(new URL('/register', issuer), {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${String(forA.body.access_token)}` },
        body: JSON.stringify({ client_name: 'sneaky', redirect_uris: ['https://sneaky.example.com/cb'] }),
      });
      expect(registration.status).toBe(401);
      expect(await dataSource().getRepository(Client).count()).toBe(clientsBefore);

      const forSelf = await clientCredentials(admin, [self], 'clients:register');
      const managed = await bearerGet(`/register/${rp.id}`, String(forSelf.body.access_token));
      expect(managed.status).toBe(200);
      expect(managed.body.client_id).toBe(rp.id);
    });
  });

  describe('RFC 8707 §2.2: the token endpoint narrows what was authorized, never widens it', () => {
    it('a code issued for [A] redeemed with resource=B is invalid_target and writes no token; the code is burned all the same (a retry with A is invalid_grant)', async () => {
      const issued = await code([REPORTS]);
      const before = await written();
      const widened = await redeem(issued, [BILLING]);
      expectInvalidTarget(widened);
      expect(widened.body.error_description).toContain(BILLING);
      expect(await written()).toEqual(before);
      // What the grant does: the resource is checked before the code is burned but the refusal is
      // reported after, in the transaction that burns it, like every other failed check of the
      // redemption (authorization-code.grant.ts). The code is single-use whatever went wrong.
      expect((await nest.get(CodesService).findByCode(issued.code))?.consumedAt).toBeInstanceOf(Date);
      const retried = await redeem(issued, [REPORTS]);
      expect({ status: retried.status, error: retried.body.error }).toEqual({ status: 400, error: 'invalid_grant' });
      expect(await written()).toEqual(before);
    });

    it('a replayed code is a replay whatever resource it names: the family its first redemption started is revoked (RFC 6749 §4.1.2)', async () => {
      const issued = await code([REPORTS, BILLING]);
      const first = await redeem(issued, [REPORTS]);
      expect(first.status).toBe(200);
      expect((await bearerGet('/api/v1/notes', String(first.body.access_token))).status).toBe(401);
      const before = await count(Token);
      const replayed = await redeem(issued, ['https://unknown.example.com/']);
      expect({ status: replayed.status, error: replayed.body.error }).toEqual({ status: 400, error: 'invalid_grant' });
      expect(await count(Token)).toBe(before);
      expect(await introspect(String(first.body.access_token))).toEqual({ active: false });
      expect(await introspect(String(first.body.refresh_token))).toEqual({ active: false });
    });

    it('a code issued for [A] redeemed without resource gets a token for [A] (the authorization\'s resources, not "no restriction")', async () => {
      const granted = await tokensFor([REPORTS]);
      expect(await introspect(granted.accessToken)).toMatchObject({ aud: [REPORTS] });
      expect(await introspect(granted.refreshToken)).toMatchObject({ active: true, aud: [REPORTS] });
    });

    it('a refresh token of a grant for [A] asking resource=B is invalid_target; the refresh token is not rotated and still works', async () => {
      const granted = await tokensFor([REPORTS]);
      const before = await written();
      for (const resources of [[BILLING], [REPORTS, BILLING], [self]]) {
        const widened = await refresh(granted.refreshToken, resources);
        expectInvalidTarget(widened);
        expect(await written()).toEqual(before);
      }
      const row = await dataSource().getRepository(Token).findOneByOrFail({ tokenHash: hashSecret(granted.refreshToken) });
      expect({ kind: row.kind, consumedAt: row.consumedAt, revokedAt: row.revokedAt }).toEqual({ kind: TokenKind.Refresh, consumedAt: null, revokedAt: null });
      // Not a reuse either: the family lives, and the same refresh token rotates normally.
      expect(await introspect(granted.accessToken)).toMatchObject({ active: true });
      const rotated = await refresh(granted.refreshToken, [REPORTS]);
      expect(rotated.status).toBe(200);
      expect(await introspect(String(rotated.body.access_token))).toMatchObject({ aud: [REPORTS] });
    });

    it('a refresh of an unrestricted grant may ask resource=A (narrowing from "no restriction"); the grant itself stays unrestricted', async () => {
      const granted = await tokensFor([]);
      expect(await introspect(granted.accessToken)).not.toHaveProperty('aud');
      const narrowed = await refresh(granted.refreshToken, [REPORTS]);
      expect(narrowed.status).toBe(200);
      expect(await introspect(String(narrowed.body.access_token))).toMatchObject({ aud: [REPORTS] });
      expectInvalidToken(await bearerGet('/api/v1/notes', String(narrowed.body.access_token)));
      // The refresh token still carries the whole (unrestricted) grant: B next, then no restriction again.
      const refreshToken = String(narrowed.body.refresh_token);
      expect(await introspect(refreshToken)).not.toHaveProperty('aud');
      const other = await refresh(refreshToken, [BILLING]);
      expect(await introspect(String(other.body.access_token))).toMatchObject({ aud: [BILLING] });
      const unrestricted = await refresh(String(other.body.refresh_token));
      expect(await introspect(String(unrestricted.body.access_token))).not.toHaveProperty('aud');
      expect((await bearerGet('/api/v1/notes', String(unrestricted.body.access_token))).status).toBe(200);
      // Even an unrestricted grant cannot name an unregistered resource.
      expectInvalidTarget(await refresh(String(unrestricted.body.refresh_token), ['https://unknown.example.com/']));
    });
  });

  describe('RFC 8707 §2: malformed resource indicators', () => {
    it.each(MALFORMED)('/authorize with %s: invalid_target sent back to the client with state and iss (RFC 9207), no code written', async (_name, resources) => {
      const before = await written();
      const { callback } = await authorizeRedirect(resources);
      expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URI);
      expect(callback.searchParams.get('error')).toBe('invalid_target');
      expect(callback.searchParams.getAll('state')).toEqual(['st4te']);
      expect(callback.searchParams.getAll('iss')).toEqual([as.issuer]);
      expect(callback.searchParams.has('code')).toBe(false);
      expect(await written()).toEqual(before);
    });

    it.each(MALFORMED)('/par with %s: 400 invalid_target as JSON (RFC 9126 §2.3), nothing stored', async (_name, resources) => {
      const before = await written();
      const pkce = newPkce();
      const reply = await post('/par', [['response_type', 'code'], ['redirect_uri', REDIRECT_URI], ['scope', 'notes:read'], ['code_challenge', pkce.challenge], ['code_challenge_method', 'S256'], ...resourceParams(resources)], rp);
      expectInvalidTarget(reply);
      expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await written()).toEqual(before);
    });

    it.each(MALFORMED)('/token with %s: 400 invalid_target, no token written (client_credentials, code and refresh)', async (_name, resources) => {
      const granted = await tokensFor([]);
      const issued = await code([]);
      const before = await written();
      expectInvalidTarget(await clientCredentials(rp, resources));
      expectInvalidTarget(await refresh(granted.refreshToken, resources));
      expectInvalidTarget(await redeem(issued, resources));
      expect(await written()).toEqual(before);
      // Refused while reading the parameters, before the grant ran: neither the code nor the refresh token was used up.
      expect((await redeem(issued)).status).toBe(200);
      expect((await refresh(granted.refreshToken)).status).toBe(200);
    });

    it('an unknown (well-formed, unregistered) resource is invalid_target at all three endpoints', async () => {
      const unknown = 'https://unknown.example.com/';
      const before = await written();
      const { callback } = await authorizeRedirect([unknown]);
      expect(callback.searchParams.get('error')).toBe('invalid_target');
      expectInvalidTarget(await post('/par', [['response_type', 'code'], ['redirect_uri', REDIRECT_URI], ['scope', 'notes:read'], ['code_challenge', newPkce().challenge], ['code_challenge_method', 'S256'], ['resource', unknown]], rp));
      expectInvalidTarget(await clientCredentials(rp, [unknown]));
      // The issuer with a trailing slash is not the issuer: resources compare as strings.
      expectInvalidTarget(await clientCredentials(rp, [`${self}/`]));
      expect(await written()).toEqual(before);
    });

    it('a resource repeated with the same value is one resource: aud names it once, at /token, /authorize and /par', async () => {
      const fromToken = await clientCredentials(rp, [REPORTS, REPORTS, REPORTS]);
      expect(fromToken.status).toBe(200);
      expect(await introspect(String(fromToken.body.access_token))).toMatchObject({ aud: [REPORTS] });

      const fromCode = await tokensFor([BILLING, BILLING], [BILLING, BILLING]);
      expect(await introspect(fromCode.accessToken)).toMatchObject({ aud: [BILLING] });
      expect(await introspect(fromCode.refreshToken)).toMatchObject({ aud: [BILLING] });

      const pkce = newPkce();
      const pushed = await post('/par', [['response_type', 'code'], ['redirect_uri', REDIRECT_URI], ['scope', 'notes:read'], ['code_challenge', pkce.challenge], ['code_challenge_method', 'S256'], ['resource', REPORTS], ['resource', REPORTS]], rp);
      expect(pushed.status).toBe(201);
      const url = new URL('/authorize', issuer);
      url.searchParams.set('client_id', rp.id);
      url.searchParams.set('request_uri', String(pushed.body.request_uri));
      const page = await authorizeAsUser(new Browser(url.origin), user, url.href);
      const value = new URL(page.location!).searchParams.get('code')!;
      const fromPar = await redeem({ code: value, pkce });
      expect(fromPar.status).toBe(200);
      expect(await introspect(String(fromPar.body.access_token))).toMatchObject({ aud: [REPORTS] });

      // A JWT access token's aud is then a single string (RFC 7519 §4.1.3), not a list with a duplicate.
      const jwt = await clientCredentials(rp, [LEDGER, LEDGER]);
      const { payload } = await jwtVerify(String(jwt.body.access_token), jwks(), { typ: 'at+jwt' });
      expect(payload.aud).toBe(LEDGER);
    });
  });

  describe('RFC 8707 §2.1: a resource server the administrator deleted gets no more tokens', () => {
    it('a code naming it is refused at /token with invalid_target (resources:delete through the CLI), and no token is written', async () => {
      const gone = 'https://gone-code.example.com/';
      await nest.get(ResourceServersService).register({ uri: gone, name: 'Soon gone' }, 'test');
      const issued = await code([gone]);
      const deleted = await runCli(['resources:delete', '--uri', gone]);
      expect({ code: deleted.code, stderr: deleted.stderr }).toEqual({ code: 0, stderr: '' });
      expect(JSON.parse(deleted.stdout)).toEqual({ deleted: true, uri: gone });
      const before = await written();
      const refused = await redeem(issued);
      expectInvalidTarget(refused);
      expect(refused.body.error_description).toContain(gone);
      expect(await written()).toEqual(before);
    }, CLI_TIMEOUT);

    it('a refresh of a grant naming it is invalid_target and rotates nothing; narrowed to the resources that remain, it still works', async () => {
      const gone = 'https://gone-refresh.example.com/';
      const servers = nest.get(ResourceServersService);
      await servers.register({ uri: gone, name: 'Soon gone' }, 'test');
      const granted = await tokensFor([gone, REPORTS]);
      expect(await introspect(granted.accessToken)).toMatchObject({ aud: [gone, REPORTS] });
      await servers.remove({ uri: gone }, 'test');
      // The access token issued before keeps its audience until it expires (resource-servers.service.ts).
      expect(await introspect(granted.accessToken)).toMatchObject({ active: true, aud: [gone, REPORTS] });

      const before = await written();
      expectInvalidTarget(await refresh(granted.refreshToken));
      expectInvalidTarget(await refresh(granted.refreshToken, [gone]));
      expect(await written()).toEqual(before);
      expect(await introspect(granted.refreshToken)).toMatchObject({ active: true });

      const narrowed = await refresh(granted.refreshToken, [REPORTS]);
      expect(narrowed.status).toBe(200);
      expect(await introspect(String(narrowed.body.access_token))).toMatchObject({ aud: [REPORTS] });
    });
  });

  describe('RFC 8707 §2.1 with the implicit grant (RFC 6749 §4.2): the token in the fragment is restricted too', () => {
    it('response_type=token with resource=A: aud [A], refused by the data API; with a malformed resource, invalid_target in the fragment', async () => {
      const implicit = await nest.get(ClientsService).create({ name: 'Legacy SPA', redirectUris: [REDIRECT_URI], scope: 'notes:read', grantTypes: ['implicit'] as never });
      const authorizeImplicit = async (resources: string[]): Promise<URLSearchParams> => {
        const url = new URL('/authorize', issuer);
        for (const [name, value] of Object.entries({ client_id: implicit.client.id, response_type: 'token', redirect_uri: REDIRECT_URI, scope: 'notes:read', state: 'imp' })) url.searchParams.set(name, value);
        for (const resource of resources) url.searchParams.append('resource', resource);
        const page = await authorizeAsUser(new Browser(url.origin), user, url.href);
        return new URLSearchParams(new URL(page.location!).hash.slice(1));
      };
      const fragment = await authorizeImplicit([REPORTS]);
      expect(fragment.get('state')).toBe('imp');
      const accessToken = fragment.get('access_token')!;
      expect(await introspect(accessToken)).toMatchObject({ active: true, aud: [REPORTS] });
      expectInvalidToken(await bearerGet('/api/v1/notes', accessToken));

      const before = await written();
      const refused = await authorizeImplicit([`${REPORTS}#x`]);
      expect({ error: refused.get('error'), state: refused.get('state'), iss: refused.get('iss'), token: refused.has('access_token') }).toEqual({ error: 'invalid_target', state: 'imp', iss: as.issuer, token: false });
      expect(await written()).toEqual(before);
    });
  });

  describe('RFC 9068: JWT access tokens', () => {
    it('verify with the published JWKS: header typ at+jwt (§2.1), alg RS256 and a kid; iss, aud, sub, client_id, scope, a UUID jti that is the stored row\'s id', async () => {
      const granted = await tokensFor([LEDGER]);
      expect(granted.accessToken.split('.')).toHaveLength(3);
      const { payload, protectedHeader } = await jwtVerify(granted.accessToken, jwks(), { issuer: as.issuer, audience: LEDGER, typ: 'at+jwt', algorithms: ['RS256'] });
      expect(protectedHeader).toEqual({ alg: 'RS256', typ: 'at+jwt', kid: expect.any(String) });
      expect(payload).toMatchObject({ iss: self, aud: LEDGER, sub: userId, client_id: rp.id, scope: 'notes:read' });
      expect(payload.jti).toMatch(UUID);
      // Stored by its hash like any access token, under the row id the jti names.
      const row = await dataSource().getRepository(Token).findOneByOrFail({ tokenHash: hashSecret(granted.accessToken) });
      expect({ id: row.id, kind: row.kind, audience: row.audience }).toEqual({ id: payload.jti, kind: TokenKind.Access, audience: LEDGER });
      // The refresh token stays opaque.
      expect(granted.refreshToken).toMatch(/^lk_rt_/);
    });

    it('is not accepted as an ID token: a validator requiring typ JWT refuses it, oauth4webapi\'s ID token checks refuse it; and an ID token is no access token', async () => {
      const granted = await tokensFor([LEDGER], [], { scope: 'openid notes:read' });
      const idToken = String(granted.body.id_token);
      // The baseline: the ID token of the same response passes the ID token checks.
      await expect(jwtVerify(idToken, jwks(), { issuer: as.issuer, audience: rp.id, typ: 'JWT', algorithms: ['RS256'] })).resolves.toBeDefined();
      // Same key, same issuer: only the header type and the audience tell them apart.
      expect(decodeProtectedHeader(idToken).kid).toBe(decodeProtectedHeader(granted.accessToken).kid);
      await expect(jwtVerify(granted.accessToken, jwks(), { typ: 'JWT' })).rejects.toMatchObject({ code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'typ' });
      await expect(jwtVerify(granted.accessToken, jwks(), { issuer: as.issuer, audience: rp.id, algorithms: ['RS256'] })).rejects.toMatchObject({ code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'aud' });
      // A stock OpenID client (oauth4webapi, which openid-client builds on) handed the access token
      // as the id_token of a token response. It does not look at typ: the aud (a resource URI, never
      // a client_id) is what stops it.
      const forged = new Response(JSON.stringify({ access_token: 'x', token_type: 'bearer', id_token: granted.accessToken }), { status: 200, headers: { 'content-type': 'application/json' } });
      await expect(oauth.processAuthorizationCodeResponse(as, { client_id: rp.id }, forged)).rejects.toMatchObject({ code: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED', cause: { claim: 'aud' } });
      // The other way: a resource server checking typ at+jwt refuses the ID token.
      await expect(jwtVerify(idToken, jwks(), { typ: 'at+jwt' })).rejects.toMatchObject({ claim: 'typ' });
      // And Latchkey's data API does not know the ID token as an access token.
      expectInvalidToken(await bearerGet('/api/v1/notes', idToken));
    });

    it('a tampered JWT (payload changed, signature kept) fails offline verification and is 401 at the data API, which looks tokens up by hash', async () => {
      // For the ledger and Latchkey's own APIs: a JWT that genuinely opens the data API.
      const granted = await tokensFor([LEDGER, self]);
      const { payload } = await jwtVerify(granted.accessToken, jwks(), { typ: 'at+jwt', audience: self });
      expect(payload.aud).toEqual([LEDGER, self]);
      expect((await bearerGet('/api/v1/notes', granted.accessToken)).status).toBe(200);

      const forgeries = [
        tamperPayload(granted.accessToken, (claims) => (claims.scope = 'notes:read notes:write')),
        tamperPayload(granted.accessToken, (claims) => (claims.sub = '00000000-0000-7000-8000-000000000000')),
        tamperPayload(granted.accessToken, (claims) => (claims.exp = Number(claims.exp) + 3600)),
        // alg none (RFC 8725 §2.1), the original claims and no signature.
        [Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url'), granted.accessToken.split('.')[1], ''].join('.'),
      ];
      for (const forged of forgeries) {
        expect(forged).not.toBe(granted.accessToken);
        await expect(jwtVerify(forged, jwks(), { typ: 'at+jwt' })).rejects.toBeInstanceOf(Error);
        expectInvalidToken(await bearerGet('/api/v1/notes', forged));
        expect(await introspect(forged)).toEqual({ active: false });
      }
    });

    it('a DPoP-bound JWT access token carries cnf.jkt, the thumbprint of the proof\'s key (RFC 9449 §6.1), after one use_dpop_nonce round', async () => {
      const keyPair = await oauth.generateKeyPair('ES256');
      const client: oauth.Client = { client_id: rp.id };
      const dpop = oauth.DPoP(client, keyPair);
      let nonceAsked = false;
      const tokens = await withNonceRetry(async () => {
        const response = await oauth.clientCredentialsGrantRequest(as, client, oauth.ClientSecretBasic(rp.secret), new URLSearchParams({ resource: LEDGER, scope: 'notes:read' }), { DPoP: dpop, ...INSECURE });
        if (response.status === 400) nonceAsked = true;
        return oauth.processClientCredentialsResponse(as, client, response);
      });
      expect(nonceAsked).toBe(true);
      expect(tokens.token_type).toBe('dpop');
      const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey), 'sha256');
      const { payload, protectedHeader } = await jwtVerify(tokens.access_token, jwks(), { issuer: as.issuer, audience: LEDGER, typ: 'at+jwt', algorithms: ['RS256'] });
      expect(protectedHeader.typ).toBe('at+jwt');
      expect(payload.cnf).toEqual({ jkt });
      expect(payload.jti).toMatch(UUID);
      // client_credentials: sub is the client itself (RFC 9068 §2.2).
      expect(payload).toMatchObject({ sub: rp.id, client_id: rp.id });
      expect(await introspect(tokens.access_token)).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt }, aud: [LEDGER] });
    });

    it('a MAC client asking resource=<JWT resource> gets a MAC token (opaque lk_at_, mac_key), not a JWT; introspection reports its aud', async () => {
      const reply = await clientCredentials(macClient, [LEDGER]);
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({ token_type: 'mac', mac_key: expect.any(String), mac_algorithm: 'hmac-sha-256', access_token: expect.stringMatching(/^lk_at_[A-Za-z0-9_-]+$/) });
      expect(String(reply.body.access_token)).not.toContain('.');
      expect(await introspect(String(reply.body.access_token))).toMatchObject({ active: true, token_type: 'mac', aud: [LEDGER], client_id: macClient.id });
      // A MAC token is never good as a bearer token, wherever it is for.
      expectInvalidToken(await bearerGet('/api/v1/notes', String(reply.body.access_token)));
    });
  });

  describe('the administrator\'s CLI: resources:register | list | delete (RFC 8707 §2), audited', () => {
    const cliJson = async (args: string[]): Promise<unknown> => {
      const result = await runCli(args);
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
      return JSON.parse(result.stdout) as unknown;
    };
    const auditList = async (): Promise<{ actor: string; action: string; subject: string; details: Record<string, unknown> }[]> =>
      (await cliJson(['audit:list', '--limit', '1000'])) as { actor: string; action: string; subject: string; details: Record<string, unknown> }[];

    it('refuses a fragment, a relative URI, the issuer itself, a duplicate and a 2001-character URI: non-zero exit, a clear message, nothing written', async () => {
      const listed = await cliJson(['resources:list']);
      const before = { ...(await written()), audit: await count(AuditEvent) };
      const cases: [string[], RegExp][] = [
        [['--uri', `${REPORTS}#frag`], /fragment/],
        [['--uri', '/relative/path'], /not an absolute URI/],
        [['--uri', 'reports.example.com/api'], /not an absolute URI/],
        [['--uri', 'https://reports.example.com/a b'], /whitespace/],
        [['--uri', self], /Latchkey's own APIs/],
        [['--uri', REPORTS], /registered already/],
        [['--uri', LEDGER, '--jwt-access-tokens'], /registered already/],
        [['--uri', `https://long.example.com/${'a'.repeat(2001 - 'https://long.example.com/'.length)}`], /longer than 2000/],
      ];
      const results: [string[], CliResult][] = [];
      for (const [args] of cases) results.push([args, await runCli(['resources:register', ...args])]);
      for (const [index, [args, result]] of results.entries()) {
        expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code: 1, stdout: '' });
        expect(result.stderr).toMatch(cases[index][1]);
        expect(result.stderr).toMatch(/^latchkey: /);
      }
      expect({ ...(await written()), audit: await count(AuditEvent) }).toEqual(before);
      expect(await cliJson(['resources:list'])).toEqual(listed);
    }, CLI_TIMEOUT);

    it('resources:delete of an unknown URI (or without --uri) exits non-zero and deletes nothing', async () => {
      const before = { ...(await written()), audit: await count(AuditEvent) };
      const unknown = await runCli(['resources:delete', '--uri', 'https://never-registered.example.com/']);
      expect({ code: unknown.code, stdout: unknown.stdout }).toEqual({ code: 1, stdout: '' });
      expect(unknown.stderr).toContain('No resource server with the URI https://never-registered.example.com/');
      // A near miss of a registered URI is another URI: resources compare as strings.
      const nearMiss = await runCli(['resources:delete', '--uri', `${REPORTS}/`]);
      expect(nearMiss.code).not.toBe(0);
      const missing = await runCli(['resources:delete']);
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toMatch(/uri/);
      expect({ ...(await written()), audit: await count(AuditEvent) }).toEqual(before);
    }, CLI_TIMEOUT);

    it('resources:list prints JSON; a registration and a deletion through the CLI take effect at once for the running server, and every one is in audit:list', async () => {
      const uri = 'https://cli-made.example.com/api';
      const registered = await cliJson(['resources:register', '--uri', uri, '--name', 'Made by the CLI', '--jwt-access-tokens']);
      expect(registered).toEqual({ id: expect.any(String), uri, name: 'Made by the CLI', access_token_format: 'jwt', introspector: null, created_at: expect.any(String) });
      const listed = (await cliJson(['resources:list'])) as Record<string, unknown>[];
      expect(listed.map((server) => server.uri)).toEqual(expect.arrayContaining([REPORTS, BILLING, LEDGER, uri]));
      expect(listed.find((server) => server.uri === LEDGER)).toEqual({ id: expect.any(String), uri: LEDGER, name: 'Ledger', access_token_format: 'jwt', introspector: introspector.id, created_at: expect.any(String) });
      expect(listed.find((server) => server.uri === REPORTS)).toMatchObject({ access_token_format: 'opaque' });

      // The running server sees it with no restart: a JWT for it.
      const issued = await clientCredentials(rp, [uri]);
      await expect(jwtVerify(String(issued.body.access_token), jwks(), { typ: 'at+jwt', audience: uri })).resolves.toBeDefined();

      expect(await cliJson(['resources:delete', '--uri', uri])).toEqual({ deleted: true, uri });
      expectInvalidTarget(await clientCredentials(rp, [uri]));
      expect(((await cliJson(['resources:list'])) as Record<string, unknown>[]).map((server) => server.uri)).not.toContain(uri);

      const events = (await auditList()).filter((event) => event.action.startsWith('resource_server.'));
      // The registration and deletion of one server name the same row.
      const ofCliServer = events.filter((event) => (event.details as { uri?: string }).uri === uri).map((event) => event.subject);
      expect(new Set(ofCliServer).size).toBe(1);
      expect(events).toEqual(
        expect.arrayContaining([
          // audit:list prints each event whole: its id, and ip (null: not a change over HTTP).
          { id: expect.any(String), at: expect.any(String), actor: 'cli', ip: null, action: 'resource_server.registered', subject: expect.stringMatching(RESOURCE_SERVER_SUBJECT), details: { uri, name: 'Made by the CLI', access_token_format: 'jwt', introspector: null } },
          { id: expect.any(String), at: expect.any(String), actor: 'cli', ip: null, action: 'resource_server.deleted', subject: expect.stringMatching(RESOURCE_SERVER_SUBJECT), details: { uri } },
          expect.objectContaining({ actor: 'test', action: 'resource_server.registered', subject: expect.stringMatching(RESOURCE_SERVER_SUBJECT), details: { uri: LEDGER, name: 'Ledger', access_token_format: 'jwt', introspector: introspector.id } }),
        ]),
      );
      // Every registration and deletion of this file, whoever made it, and nothing else.
      const registrations = await count(ResourceServer);
      const registeredEvents = events.filter((event) => event.action === 'resource_server.registered').length;
      const deletedEvents = events.filter((event) => event.action === 'resource_server.deleted').length;
      expect(registeredEvents - deletedEvents).toBe(registrations);
    }, CLI_TIMEOUT);
  });
});
