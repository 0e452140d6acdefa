/**
 * Threats (security issue 30, items 2 and 3):
 * - A client registered with `subject_type: pairwise` learns the person's global identifier from
 *   an access token it can read (a JWT, RFC 9068), or from introspection, and matches people up
 *   across sectors (OpenID Connect Core §8.1, RFC 9068 §6). Defence: every sub shown for a person
 *   to, or about, a client's token is SubjectIdentifiers' answer for that client: the ID token,
 *   userinfo, the JWT access token of every grant, and introspection of its tokens.
 * - One resource server's introspector reads a token meant for another because the token also
 *   names Latchkey's own APIs (RFC 7662 §2.2, §4). Defence: IntrospectionAccess shows a token to
 *   every introspecting client only when it opens nothing but Latchkey's own APIs; a token that
 *   also names resource server A is A's introspector's alone.
 * Everything over real HTTP against the real app.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createRemoteJWKSet, decodeJwt, jwtVerify, type JWTPayload } from 'jose';
import { JWKS_PATH } from '../../src/auth/metadata/metadata.service.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { ResourceServersService } from '../../src/resource-servers/resource-servers.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { Browser } from '../helpers/browser.js';
import { authorizeAsUser, newPkce } from '../helpers/oauth-flow.js';
import type { TestUser } from '../helpers/test-app.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { postForm, resourceParams, type FormClient, type FormReply } from '../helpers/form-post.js';

/** A resource server registered for RFC 9068 JWT access tokens. */
const LEDGER = 'https://ledger.example.com/v2';
/** Resource server A (opaque tokens), with an introspector of its own. */
const REPORTS = 'https://reports.example.com/api';
/** Resource server B (opaque tokens), with another introspector. */
const BILLING = 'https://billing.example.com/';
/** The pairwise clients' sectors (Core §8.1: the one host of their redirect URIs). */
const PHOTOS_CALLBACK = 'https://photos.example/cb';
const PRINTS_CALLBACK = 'https://prints.example/cb';
const PUBLIC_CALLBACK = 'https://public.example/cb';

interface Registered extends FormClient {
  redirectUri: string;
}

type Reply = FormReply;

describe('the sub a client sees in its access tokens, and who reads them at /introspect (security issue 30, items 2 and 3)', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  /** Latchkey's own APIs as a resource: the issuer identifier. */
  let self: string;
  let user: TestUser;
  let userId: string;
  /** Pairwise, sector photos.example: every grant that can carry a person. */
  let photos: Registered;
  /** Pairwise, sector prints.example. */
  let prints: Registered;
  /** A public-subject client: sees the person's id. */
  let open: Registered;
  let ledgerIntrospector: Registered;
  let reportsIntrospector: Registered;
  let billingIntrospector: Registered;
  /** Holds tokens:introspect but introspects for no registered resource server. */
  let bystander: Registered;

  const post = (path: string, form: [string, string][], client: Registered): Promise<Reply> => postForm(issuer, path, form, client);

  async function token(form: [string, string][], client: Registered): Promise<Record<string, unknown>> {
    const reply = await post('/token', form, client);
    if (reply.status !== 200) throw new Error(`/token answered ${reply.status}: ${JSON.stringify(reply.body)}`);
    return reply.body;
  }

  /** The code flow for `client` (sign-in and consent), redeemed: the token response. */
  async function codeFlow(client: Registered, resources: readonly string[], scope = 'openid notes:read notes:write'): Promise<Record<string, unknown>> {
    const pkce = newPkce();
    const url = new URL('/authorize', issuer);
    for (const [name, value] of Object.entries({ client_id: client.id, response_type: 'code', redirect_uri: client.redirectUri, scope, state: 's', nonce: 'n', code_challenge: pkce.challenge, code_challenge_method: 'S256' })) {
      url.searchParams.set(name, value);
    }
    for (const resource of resources) url.searchParams.append('resource', resource);
    const page = await authorizeAsUser(new Browser(url.origin), user, url.href);
    const code = page.location ? new URL(page.location).searchParams.get('code') : null;
    if (!code) throw new Error(`No code: ${page.status} ${page.location ?? page.body}`);
    return token([['grant_type', 'authorization_code'], ['code', code], ['redirect_uri', client.redirectUri], ['code_verifier', pkce.verifier]], client);
  }

  /** The implicit grant (RFC 6749 §4.2) for `client`: the access token from the fragment. */
  async function implicit(client: Registered, resources: readonly string[]): Promise<string> {
    const url = new URL('/authorize', issuer);
    for (const [name, value] of Object.entries({ client_id: client.id, response_type: 'token', redirect_uri: client.redirectUri, scope: 'notes:read', state: 's' })) url.searchParams.set(name, value);
    for (const resource of resources) url.searchParams.append('resource', resource);
    const page = await authorizeAsUser(new Browser(url.origin), user, url.href);
    const accessToken = page.location ? new URLSearchParams(new URL(page.location).hash.slice(1)).get('access_token') : null;
    if (!accessToken) throw new Error(`No access token: ${page.status} ${page.location ?? page.body}`);
    return accessToken;
  }

  /** What LEDGER does offline (RFC 9068 §4): the JWT checked with the published keys. */
  async function verifiedAtLedger(jwt: unknown): Promise<JWTPayload> {
    const jwks = createRemoteJWKSet(new URL(JWKS_PATH, issuer));
    return (await jwtVerify(String(jwt), jwks, { issuer: self, audience: LEDGER, typ: 'at+jwt', algorithms: ['RS256'] })).payload;
  }

  async function introspect(tokenValue: unknown, caller: Registered): Promise<Record<string, unknown>> {
    const reply = await post('/introspect', [['token', String(tokenValue)]], caller);
    if (reply.status !== 200) throw new Error(`/introspect answered ${reply.status}: ${JSON.stringify(reply.body)}`);
    return reply.body;
  }

  async function bearer(method: 'GET' | 'POST', path: string, tokenValue: unknown, body?: unknown): Promise<Reply> {
    const response = await fetch(new URL(path, issuer), {
      method,
      headers: { authorization: `Bearer ${String(tokenValue)}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }

  beforeAll(async () => {
    ({ nest, issuer } = await startAtIssuer({ RATE_LIMIT_CLIENT_PER_MINUTE: '0', RATE_LIMIT_API_PER_MINUTE: '0' }));
    self = issuer.href.replace(/\/$/, '');
    user = { username: `pat_${Date.now().toString(36)}`, password: 'correct horse battery staple' };
    userId = (await nest.get(UsersService).create(user.username, user.password)).id;
    const clients = nest.get(ClientsService);
    const create = async (input: Parameters<ClientsService['create']>[0]): Promise<Registered> => {
      const created = await clients.create(input);
      return { id: created.client.id, secret: created.secret!, redirectUri: input.redirectUris[0] ?? '' };
    };
    const grants = ['authorization_code', 'refresh_token', 'password', 'implicit', 'client_credentials'] as never;
    photos = await create({ name: 'Photos', redirectUris: [PHOTOS_CALLBACK], scope: 'notes:read notes:write', grantTypes: grants, openId: { subject_type: 'pairwise' } });
    prints = await create({ name: 'Prints', redirectUris: [PRINTS_CALLBACK], scope: 'notes:read notes:write', grantTypes: ['authorization_code', 'refresh_token'] as never, openId: { subject_type: 'pairwise' } });
    open = await create({ name: 'Public subjects', redirectUris: [PUBLIC_CALLBACK], scope: 'notes:read notes:write', grantTypes: ['authorization_code', 'refresh_token'] as never });
    const introspectorClient = (name: string) => create({ name, redirectUris: [], scope: 'tokens:introspect', grantTypes: ['client_credentials'] as never });
    [ledgerIntrospector, reportsIntrospector, billingIntrospector, bystander] = [
      await introspectorClient('Ledger RS'),
      await introspectorClient('Reports RS'),
      await introspectorClient('Billing RS'),
      await introspectorClient('RS of nothing registered'),
    ];
    const servers = nest.get(ResourceServersService);
    await servers.register({ uri: LEDGER, name: 'Ledger', accessTokenFormat: 'jwt', introspector: ledgerIntrospector.id }, 'test');
    await servers.register({ uri: REPORTS, name: 'Reports', introspector: reportsIntrospector.id }, 'test');
    await servers.register({ uri: BILLING, name: 'Billing', introspector: billingIntrospector.id }, 'test');
  });
  afterAll(async () => {
    await nest?.close();
    await dropTestDatabase();
  });

  describe('OpenID Connect Core §8.1, RFC 9068 §2.2 and §6: a pairwise client never sees the person\'s global id', () => {
    it('the JWT access token of a code flow carries the pairwise sub of the ID token beside it, not the person\'s id; another sector\'s differs; a public client\'s is the id', async () => {
      const forPhotos = await codeFlow(photos, [LEDGER]);
      const idTokenSub = decodeJwt(String(forPhotos.id_token)).sub;
      expect(idTokenSub).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const photosAccess = await verifiedAtLedger(forPhotos.access_token);
      expect(photosAccess).toMatchObject({ client_id: photos.id, aud: LEDGER });
      expect(photosAccess.sub).not.toBe(userId);
      expect(photosAccess.sub).toBe(idTokenSub);

      const forPrints = await codeFlow(prints, [LEDGER]);
      const printsAccess = await verifiedAtLedger(forPrints.access_token);
      expect(printsAccess.sub).toBe(decodeJwt(String(forPrints.id_token)).sub);
      expect(new Set([photosAccess.sub, printsAccess.sub, userId]).size).toBe(3);

      const forOpen = await codeFlow(open, [LEDGER]);
      expect((await verifiedAtLedger(forOpen.access_token)).sub).toBe(userId);
    });

    it('every other grant that mints a JWT for the pairwise client says the same pairwise sub: refresh, password, implicit; client_credentials names the client', async () => {
      const first = await codeFlow(photos, [LEDGER, self]);
      const pairwiseSub = decodeJwt(String(first.id_token)).sub;
      // Userinfo (Core §5.3.2) already answered with the pairwise sub; the access tokens must agree.
      expect((await bearer('GET', '/userinfo', first.access_token)).body).toEqual({ sub: pairwiseSub });

      const refreshed = await token([['grant_type', 'refresh_token'], ['refresh_token', String(first.refresh_token)], ...resourceParams([LEDGER])], photos);
      const password = await token([['grant_type', 'password'], ['username', user.username], ['password', user.password], ['scope', 'notes:read'], ...resourceParams([LEDGER])], photos);
      const implicitToken = await implicit(photos, [LEDGER]);
      for (const [grant, accessToken] of [['code', first.access_token], ['refresh_token', refreshed.access_token], ['password', password.access_token], ['implicit', implicitToken]] as const) {
        expect({ grant, sub: (await verifiedAtLedger(accessToken)).sub }).toEqual({ grant, sub: pairwiseSub });
      }

      // No person: RFC 9068 §2.2, the client itself.
      const service = await token([['grant_type', 'client_credentials'], ['scope', 'notes:read'], ...resourceParams([LEDGER])], photos);
      expect((await verifiedAtLedger(service.access_token)).sub).toBe(photos.id);
    });

    it('introspection of a pairwise client\'s token reports the sub its JWT carries (the pairwise one), for opaque tokens too; a public client\'s reports the person\'s id', async () => {
      const granted = await codeFlow(photos, [LEDGER]);
      const jwtSub = (await verifiedAtLedger(granted.access_token)).sub;
      expect(await introspect(granted.access_token, ledgerIntrospector)).toMatchObject({ active: true, client_id: photos.id, sub: jwtSub });
      // The refresh token of the grant speaks for the same person to the same client.
      expect(await introspect(granted.refresh_token, ledgerIntrospector)).toMatchObject({ active: true, sub: jwtSub });

      // Unrestricted opaque tokens are shown to every introspector: none learns the global id from them.
      const opaque = await codeFlow(photos, []);
      const opaqueSub = decodeJwt(String(opaque.id_token)).sub;
      expect(opaqueSub).toBe(jwtSub);
      for (const caller of [bystander, reportsIntrospector]) {
        expect(await introspect(opaque.access_token, caller)).toMatchObject({ active: true, client_id: photos.id, sub: opaqueSub });
      }

      const forOpen = await codeFlow(open, []);
      expect(await introspect(forOpen.access_token, bystander)).toMatchObject({ active: true, sub: userId });
    });

    it('the data API still finds the person\'s own items with the pairwise client\'s JWT (it resolves the person from the token row, not from sub)', async () => {
      const pairwise = await codeFlow(photos, [LEDGER, self]);
      const created = await bearer('POST', '/api/v1/notes', pairwise.access_token, { title: 'written through the pairwise client' });
      expect(created.status).toBe(201);
      const publicToken = await codeFlow(open, []);
      const read = await bearer('GET', `/api/v1/notes/${String(created.body.id)}`, publicToken.access_token);
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({ id: created.body.id });
      expect((await bearer('GET', `/api/v1/notes/${String(created.body.id)}`, pairwise.access_token)).status).toBe(200);
    });
  });

  describe('RFC 7662 §2.2, §4: a token that also names Latchkey\'s own APIs is still only its resource servers\' to introspect', () => {
    it('a token for [the issuer, A] is active to A\'s introspector, and {"active": false} to B\'s and to an introspector of no resource server', async () => {
      const granted = await codeFlow(open, [self, REPORTS], 'notes:read');
      // It opens both: Latchkey's own APIs, and (by its audience) A.
      expect((await bearer('GET', '/api/v1/notes', granted.access_token)).status).toBe(200);
      expect(await introspect(granted.access_token, reportsIntrospector)).toMatchObject({ active: true, client_id: open.id, aud: [self, REPORTS] });
      expect(await introspect(granted.access_token, billingIntrospector)).toEqual({ active: false });
      expect(await introspect(granted.access_token, bystander)).toEqual({ active: false });
      // Its refresh token too: it can mint tokens for A.
      expect(await introspect(granted.refresh_token, reportsIntrospector)).toMatchObject({ active: true });
      expect(await introspect(granted.refresh_token, billingIntrospector)).toEqual({ active: false });
    });

    it('the same for client_credentials and for a JWT: [the issuer, LEDGER] is LEDGER\'s introspector\'s alone', async () => {
      const service = await token([['grant_type', 'client_credentials'], ['scope', 'notes:read'], ...resourceParams([REPORTS, self])], photos);
      expect(await introspect(service.access_token, reportsIntrospector)).toMatchObject({ active: true, aud: [REPORTS, self] });
      expect(await introspect(service.access_token, billingIntrospector)).toEqual({ active: false });
      const jwt = await codeFlow(open, [self, LEDGER], 'notes:read');
      expect(await introspect(jwt.access_token, ledgerIntrospector)).toMatchObject({ active: true });
      for (const caller of [reportsIntrospector, billingIntrospector, bystander]) expect(await introspect(jwt.access_token, caller)).toEqual({ active: false });
    });

    it('a token for the issuer alone, and an unrestricted one, are still shown to every introspecting client (they open nothing else)', async () => {
      for (const resources of [[self], []]) {
        const granted = await codeFlow(open, resources, 'notes:read');
        for (const caller of [reportsIntrospector, billingIntrospector, ledgerIntrospector, bystander]) {
          expect(await introspect(granted.access_token, caller)).toMatchObject({ active: true, client_id: open.id });
        }
      }
    });
  });
});
