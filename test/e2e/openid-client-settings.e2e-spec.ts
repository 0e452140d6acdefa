/**
 * A client's OpenID Connect settings (Dynamic Client Registration 1.0 §2): the ID token's
 * algorithm, public or pairwise subjects (Core §8), default_max_age, and the logout URIs, as
 * registered over HTTP (RFC 7591) and refused with invalid_client_metadata when unsupported.
 * Test names follow the OpenID Foundation's Basic and Dynamic OP test modules they mirror.
 */
import { jest } from '@jest/globals';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Browser, isLoginPage } from '../helpers/browser.js';
import { makeSelfSignedCertificate } from '../helpers/self-signed.js';
import { authorizeAsUser, authorizeUrl, newPkce, redirectParams, tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type RegisteredClientWithMethod, type TestUser } from '../helpers/test-app.js';

const ISSUER = 'https://auth.example.test';

describe('OpenID Connect client settings', () => {
  let app: TestApp;
  let alice: TestUser;
  let adminToken: string;

  /** Signs alice in for `client` (login and consent on first use) and returns the token response. */
  async function signIn(client: RegisteredClientWithMethod, browser = new Browser(app.baseUrl), scope = 'openid'): Promise<Record<string, unknown>> {
    const pkce = newPkce();
    const page = await authorizeAsUser(browser, alice, authorizeUrl(client, { scope, state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256' }));
    const code = redirectParams(page).get('code')!;
    const tokens = await tokenRequest(app, client, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier });
    expect(tokens.status).toBe(200);
    return tokens.body;
  }

  async function register(metadata: Record<string, unknown>): Promise<{ status: number; json: Record<string, unknown> }> {
    const response = await fetch(app.url('/register'), {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'RP', redirect_uris: ['https://rp.example/cb'], ...metadata }),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  }

  const clientCount = async (): Promise<number> => Number((await app.dataSource.query<{ n: number }[]>('SELECT COUNT(*) AS "n" FROM "clients"'))[0].n);

  // An https server of sector identifier documents, with a certificate the app trusts through OUTBOUND_EXTRA_CA_FILE.
  const sectorDocuments = new Map<string, string>();
  let sectorServer: HttpsServer;
  let sectorRequests = 0;
  const sectorUrl = (path: string): string => `https://127.0.0.1:${(sectorServer.address() as AddressInfo).port}${path}`;

  beforeAll(async () => {
    const tls = makeSelfSignedCertificate();
    sectorServer = createHttpsServer({ cert: tls.cert, key: readFileSync(tls.keyFile) }, (request, response) => {
      sectorRequests += 1;
      const body = sectorDocuments.get(request.url ?? '');
      response.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' }).end(body ?? '');
    });
    await new Promise<void>((resolve) => sectorServer.listen(0, '127.0.0.1', resolve));
    app = await TestApp.start({ ISSUER, OUTBOUND_EXTRA_CA_FILE: tls.certFile });
    alice = await app.createUser('alice-settings');
    const admin: RegisteredClient = await app.createClient({ name: 'admin', redirectUris: [], grantTypes: ['client_credentials'] as never, scope: 'clients:register' });
    adminToken = (await tokenRequest(app, admin as RegisteredClientWithMethod, { grant_type: 'client_credentials' })).body.access_token as string;
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(async () => {
    await app?.stop();
    await new Promise<void>((resolve) => sectorServer.close(() => resolve()));
  });

  describe('id_token_signed_response_alg', () => {
    it.each(['ES256', 'EdDSA'])('oidcc-idtoken-%s: signs the client’s ID tokens with its algorithm, verifiable with the JWKS', async (alg) => {
      const client = await app.createClient({ redirectUris: ['https://rp.example/cb'], scope: 'notes:read', openId: { id_token_signed_response_alg: alg } });
      const tokens = await signIn(client);
      const header = decodeProtectedHeader(tokens.id_token as string);
      expect(header.alg).toBe(alg);
      const jwks = await (await fetch(app.url('/.well-known/jwks.json'))).json();
      const { payload } = await jwtVerify(tokens.id_token as string, async (protectedHeader) => {
        const key = (jwks as { keys: { kid: string }[] }).keys.find((candidate) => candidate.kid === protectedHeader.kid)!;
        const { importJWK } = await import('jose');
        return importJWK(key as never, alg);
      });
      expect(payload.aud).toBe(client.clientId);
    });

    it.each(['HS256', 'none', 'RS512'])('oidcc-registration: refuses %s with invalid_client_metadata and registers nothing', async (alg) => {
      const before = await clientCount();
      const { status, json } = await register({ id_token_signed_response_alg: alg });
      expect([status, json.error]).toEqual([400, 'invalid_client_metadata']);
      expect(json.error_description).toMatch(/RS256, ES256, EdDSA/);
      expect(await clientCount()).toBe(before);
    });
  });

  describe('subject_type (Core §8)', () => {
    it('a public client sees the user id; pairwise clients see one sub per sector, the same at userinfo', async () => {
      const open = await app.createClient({ redirectUris: ['https://public.example/cb'], scope: 'notes:read' });
      const first = await app.createClient({ redirectUris: ['https://sector-a.example/cb'], scope: 'notes:read', openId: { subject_type: 'pairwise' } });
      const sameSector = await app.createClient({ redirectUris: ['https://sector-a.example/other'], scope: 'notes:read', openId: { subject_type: 'pairwise' } });
      const otherSector = await app.createClient({ redirectUris: ['https://sector-b.example/cb'], scope: 'notes:read', openId: { subject_type: 'pairwise' } });
      const sub = async (client: RegisteredClientWithMethod) => decodeJwt((await signIn(client)).id_token as string).sub;
      const [publicSub, a1, a2, b] = [await sub(open), await sub(first), await sub(sameSector), await sub(otherSector)];
      const userId = (await app.dataSource.query<{ id: string }[]>(`SELECT "id" FROM "users" WHERE "username" = 'alice-settings'`))[0].id;
      expect(publicSub).toBe(userId);
      expect(a1).toBe(a2);
      expect(new Set([publicSub, a1, b]).size).toBe(3);
      expect(a1).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const tokens = await signIn(first);
      const info = await (await fetch(app.url('/userinfo'), { headers: { authorization: `Bearer ${tokens.access_token as string}` } })).json();
      expect(info).toEqual({ sub: a1 });
    });

    it('refuses pairwise without one host for its redirect URIs (and no sector_identifier_uri), and unknown subject types', async () => {
      const twoHosts = await register({ subject_type: 'pairwise', redirect_uris: ['https://a.example/cb', 'https://b.example/cb'] });
      expect([twoHosts.status, twoHosts.json.error]).toEqual([400, 'invalid_client_metadata']);
      const other = await register({ subject_type: 'ephemeral' });
      expect([other.status, other.json.error]).toEqual([400, 'invalid_client_metadata']);
    });

    describe('sector_identifier_uri (Core §8.1, Dynamic Registration §5)', () => {
      const TWO_HOSTS = ['https://a.example/cb', 'https://b.example/cb'];

      it('oidcc-registration-sector-uri: a document listing every redirect URI makes its host the sector, for clients on several hosts', async () => {
        sectorDocuments.set('/sector.json', JSON.stringify([...TWO_HOSTS, 'https://c.example/cb']));
        const registered = await register({ subject_type: 'pairwise', redirect_uris: TWO_HOSTS, sector_identifier_uri: sectorUrl('/sector.json') });
        expect(registered.status).toBe(201);
        expect(registered.json.sector_identifier_uri).toBe(sectorUrl('/sector.json'));
        const first = await app.createClient({ redirectUris: ['https://a.example/cb'], scope: 'notes:read', openId: { subject_type: 'pairwise', sector_identifier_uri: sectorUrl('/sector.json') } });
        const second = await app.createClient({ redirectUris: ['https://c.example/cb'], scope: 'notes:read', openId: { subject_type: 'pairwise', sector_identifier_uri: sectorUrl('/sector.json') } });
        const hostOnly = await app.createClient({ redirectUris: ['https://a.example/cb'], scope: 'notes:read', openId: { subject_type: 'pairwise' } });
        const sub = async (client: RegisteredClientWithMethod) => decodeJwt((await signIn(client)).id_token as string).sub;
        const [a, c, plain] = [await sub(first), await sub(second), await sub(hostOnly)];
        expect(a).toBe(c);
        expect(a).not.toBe(plain);
      });

      it.each([
        ['oidcc-registration-sector-bad: a document that omits a redirect URI', '/partial.json', JSON.stringify(['https://a.example/cb']), /does not list the redirect URI\(s\) https:\/\/b.example\/cb/],
        ['a document that is not a JSON array of strings', '/object.json', JSON.stringify({ redirect_uris: TWO_HOSTS }), /JSON array/],
        ['a document that is not JSON', '/text.json', 'https://a.example/cb https://b.example/cb', /JSON array/],
        ['a missing document', '/missing.json', undefined, /answered 404/],
      ])('refuses %s with invalid_client_metadata and registers nothing', async (_name, path, content, message) => {
        if (content !== undefined) sectorDocuments.set(path, content);
        const before = await clientCount();
        const { status, json } = await register({ subject_type: 'pairwise', redirect_uris: TWO_HOSTS, sector_identifier_uri: sectorUrl(path) });
        expect([status, json.error]).toEqual([400, 'invalid_client_metadata']);
        expect(json.error_description).toMatch(message);
        expect(await clientCount()).toBe(before);
      });

      it('refuses a sector_identifier_uri that is not https, without fetching it', async () => {
        const fetched = sectorRequests;
        const { status, json } = await register({ subject_type: 'pairwise', redirect_uris: TWO_HOSTS, sector_identifier_uri: sectorUrl('/sector.json').replace('https:', 'http:') });
        expect([status, json.error]).toEqual([400, 'invalid_client_metadata']);
        expect(sectorRequests).toBe(fetched);
      });
    });
  });

  describe('default_max_age', () => {
    it('oidcc-registration-default-max-age: an older sign-in signs in again, as max_age would', async () => {
      const client = await app.createClient({ redirectUris: ['https://rp.example/cb'], scope: 'notes:read', openId: { default_max_age: 60 } });
      const browser = new Browser(app.baseUrl);
      await signIn(client, browser);
      const later = new Date(Date.now() + 120_000);
      jest.spyOn(app.clock, 'now').mockImplementation(() => later);
      const page = await browser.get(authorizeUrl(client, { scope: 'openid', code_challenge: newPkce().challenge, code_challenge_method: 'S256' }));
      expect(isLoginPage(page)).toBe(true);
    });
  });

  describe('registration over HTTP', () => {
    it('oidcc-registration-logo-uri and friends: the OpenID metadata reads back as registered, defaults shown', async () => {
      const { status, json } = await register({
        id_token_signed_response_alg: 'ES256',
        post_logout_redirect_uris: ['https://rp.example/signed-out'],
        backchannel_logout_uri: 'https://rp.example/backchannel',
        default_max_age: 3600,
        require_auth_time: true,
      });
      expect(status).toBe(201);
      expect(json).toEqual(
        expect.objectContaining({
          id_token_signed_response_alg: 'ES256',
          subject_type: 'public',
          post_logout_redirect_uris: ['https://rp.example/signed-out'],
          backchannel_logout_uri: 'https://rp.example/backchannel',
          backchannel_logout_session_required: false,
          default_max_age: 3600,
          require_auth_time: true,
        }),
      );
      const read = await (await fetch(app.url(new URL(json.registration_client_uri as string).pathname), { headers: { authorization: `Bearer ${json.registration_access_token as string}` } })).json();
      expect(read).toEqual(expect.objectContaining({ id_token_signed_response_alg: 'ES256', post_logout_redirect_uris: ['https://rp.example/signed-out'] }));
    });

    it.each([
      ['post_logout_redirect_uris', { post_logout_redirect_uris: ['http://rp.example/out'] }],
      ['post_logout_redirect_uris', { post_logout_redirect_uris: ['https://rp.example/out#x'] }],
      ['backchannel_logout_uri', { backchannel_logout_uri: 'javascript:alert(1)' }],
      ['backchannel_logout_uri', { backchannel_logout_uri: 'http://rp.example/bc' }],
      ['default_max_age', { default_max_age: -1 }],
    ])('refuses a bad %s with invalid_client_metadata and registers nothing', async (_field, metadata) => {
      const before = await clientCount();
      const { status, json } = await register(metadata);
      expect(status).toBe(400);
      expect(json.error).toBe('invalid_client_metadata');
      expect(await clientCount()).toBe(before);
    });

    it('a pairwise client managing itself cannot become public, nor drop subject_type (it would learn the user ids); nothing changes', async () => {
      const { json } = await register({ subject_type: 'pairwise' });
      const path = new URL(json.registration_client_uri as string).pathname;
      const settingsOf = async () => (await app.dataSource.query<{ openid_settings: string }[]>(`SELECT "openid_settings" FROM "clients" WHERE "id" = '${json.client_id as string}'`))[0].openid_settings;
      const before = await settingsOf();
      for (const body of [{ subject_type: 'public' }, {}]) {
        const update = await fetch(app.url(path), {
          method: 'PUT',
          headers: { authorization: `Bearer ${json.registration_access_token as string}`, 'content-type': 'application/json' },
          body: JSON.stringify({ client_id: json.client_id, client_name: 'RP', redirect_uris: ['https://rp.example/cb'], ...body }),
        });
        expect(update.status).toBe(400);
        expect(await update.json()).toEqual(expect.objectContaining({ error: 'invalid_client_metadata', error_description: expect.stringMatching(/^subject_type .*only an administrator/) }));
      }
      expect(JSON.parse(await settingsOf()).subjectType).toBe('pairwise');
      expect(await settingsOf()).toBe(before);
    });

    it('a client managing itself cannot add a post-logout redirect URI (an administrator decides where browsers are sent)', async () => {
      const { json } = await register({ post_logout_redirect_uris: ['https://rp.example/signed-out'] });
      const update = await fetch(app.url(new URL(json.registration_client_uri as string).pathname), {
        method: 'PUT',
        headers: { authorization: `Bearer ${json.registration_access_token as string}`, 'content-type': 'application/json' },
        body: JSON.stringify({ client_id: json.client_id, client_name: 'RP', redirect_uris: ['https://rp.example/cb'], post_logout_redirect_uris: ['https://rp.example/signed-out', 'https://evil.example/'] }),
      });
      expect(update.status).toBe(400);
      expect(((await update.json()) as { error: string }).error).toBe('invalid_client_metadata');
      const row = await app.dataSource.query<{ openid_settings: string }[]>(`SELECT "openid_settings" FROM "clients" WHERE "id" = '${json.client_id as string}'`);
      expect(JSON.parse(row[0].openid_settings).postLogoutRedirectUris).toEqual(['https://rp.example/signed-out']);
    });
  });

  it('keeps the signature verifiable through the published keys for every algorithm', async () => {
    const jwks = createRemoteJWKSet(new URL(app.url('/.well-known/jwks.json')));
    const client = await app.createClient({ redirectUris: ['https://rp.example/cb'], scope: 'notes:read' });
    const tokens = await signIn(client);
    await expect(jwtVerify(tokens.id_token as string, jwks, { issuer: ISSUER, audience: client.clientId })).resolves.toBeDefined();
  });
});
