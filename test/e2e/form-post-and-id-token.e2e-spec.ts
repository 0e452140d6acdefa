import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import { appConfig } from '../../src/config/app.config.js';
import { UsersService } from '../../src/users/users.service.js';
import { Browser, type Page } from '../helpers/browser.js';
import { formPostedTo } from '../helpers/relying-party.js';
import { authorizeAsUser, authorizeUrl, basicAuth, newPkce, postToken, tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';

const RP = 'https://rp.example/callback';
const IMPLICIT_RP = 'https://quick-start.example/callback';

/** The parameters of a redirect's fragment. */
function fragmentOf(page: Page): Record<string, string> {
  if (!page.location) throw new Error(`Expected a redirect, got ${page.status}:\n${page.body}`);
  return Object.fromEntries(new URLSearchParams(new URL(page.location).hash.slice(1)));
}

/**
 * Issue 37: the relying parties' quick-start settings. response_mode=form_post (OAuth 2.0 Form
 * Post Response Mode) for every response type, response_type=id_token (Core §3.2) for clients an
 * administrator registered for it, and ID tokens with the claims their scopes grant.
 */
describe('form_post responses, response_type=id_token and claims in the ID token (issue 37)', () => {
  let app: TestApp;
  let issuer: string;
  let user: TestUser;
  let userId: string;
  let codeClient: RegisteredClient;
  let idTokenClient: RegisteredClient;
  let tokenOnlyClient: RegisteredClient;
  let minimalClient: RegisteredClient;
  let pairwiseClient: RegisteredClient;
  let jwks: ReturnType<typeof createRemoteJWKSet>;

  beforeAll(async () => {
    app = await TestApp.start();
    issuer = app.app.get(appConfig.KEY).issuer;
    user = { username: `alice_${Date.now().toString(36)}`, password: 'correct horse battery staple' };
    userId = (await app.app.get(UsersService).create(user.username, user.password, { email: 'alice@example.com', name: 'Alice Liddell', givenName: 'Alice', familyName: 'Liddell' })).id;
    codeClient = await app.createClient({ name: 'Code app', redirectUris: [RP], scope: 'notes:read' });
    idTokenClient = await app.createClient({ name: 'Quick-start app', redirectUris: [IMPLICIT_RP], scope: 'notes:read', grantTypes: ['authorization_code', 'implicit'], responseTypes: ['code', 'id_token'] });
    tokenOnlyClient = await app.createClient({ name: 'Legacy SPA', redirectUris: ['https://spa.example/callback'], scope: 'notes:read', grantTypes: ['implicit'] });
    minimalClient = await app.createClient({ name: 'Minimal', redirectUris: ['https://minimal.example/callback'], scope: 'notes:read', openId: { id_token_claims: false } });
    pairwiseClient = await app.createClient({ name: 'Pairwise', redirectUris: ['https://pairwise.example/callback'], scope: 'notes:read', grantTypes: ['authorization_code', 'implicit'], responseTypes: ['code', 'id_token'], openId: { subject_type: 'pairwise' } });
    jwks = createRemoteJWKSet(new URL(app.url('/.well-known/jwks.json')));
  });
  afterAll(async () => app?.stop());

  async function verified(idToken: string, client: RegisteredClient): Promise<JWTPayload> {
    return (await jwtVerify(idToken, jwks, { issuer, audience: client.clientId })).payload;
  }

  async function tokenRows(clientId: string): Promise<unknown[]> {
    return app.dataSource.query(`SELECT id FROM tokens WHERE client_id = '${clientId}'`);
  }

  it('discovery lists form_post among the response modes and id_token among the response types', async () => {
    const metadata = (await (await fetch(app.url('/.well-known/openid-configuration'))).json()) as Record<string, string[]>;
    expect(metadata.response_modes_supported).toEqual(expect.arrayContaining(['query', 'fragment', 'form_post']));
    expect(metadata.response_types_supported).toEqual(expect.arrayContaining(['code', 'id_token']));
    expect(metadata.claims_supported).toEqual(expect.arrayContaining(['name', 'email', 'email_verified', 'updated_at']));
  });

  describe('response_type=id_token (Core §3.2), for clients registered for it', () => {
    it('posts an ID token and no access token: nonce, the profile and email claims (no userinfo to ask, Core §5.4), no at_hash; nothing stored', async () => {
      const page = await authorizeAsUser(new Browser(app.baseUrl), user, authorizeUrl(idTokenClient, { response_type: 'id_token', response_mode: 'form_post', scope: 'openid profile email', nonce: 'nonce-1', state: 'S-2' }));
      const posted = formPostedTo(page, IMPLICIT_RP);
      expect(Object.keys(posted).sort()).toEqual(['id_token', 'iss', 'state']);
      expect(posted.state).toBe('S-2');
      const claims = await verified(posted.id_token, idTokenClient);
      expect(claims).toMatchObject({ sub: userId, nonce: 'nonce-1', name: 'Alice Liddell', given_name: 'Alice', family_name: 'Liddell', preferred_username: user.username, email: 'alice@example.com', email_verified: false, updated_at: expect.any(Number), auth_time: expect.any(Number), sid: expect.any(String) });
      expect(claims).not.toHaveProperty('at_hash');
      expect(await tokenRows(idTokenClient.clientId)).toEqual([]);
    });

    it('in the fragment when no response mode is named (Multiple Response Types §2.1)', async () => {
      const page = await authorizeAsUser(new Browser(app.baseUrl), user, authorizeUrl(idTokenClient, { response_type: 'id_token', scope: 'openid', nonce: 'nonce-2', state: 'S-3' }));
      expect([302, 303]).toContain(page.status);
      const fragment = fragmentOf(page);
      expect(fragment).toEqual({ id_token: expect.any(String), state: 'S-3', iss: issuer });
      expect(new URL(page.location!).search).toBe('');
      expect((await verified(fragment.id_token, idTokenClient)).nonce).toBe('nonce-2');
    });

    it('a pairwise client gets its own sub here too, the one its code flow gets', async () => {
      const browser = new Browser(app.baseUrl);
      const implicit = fragmentOf(await authorizeAsUser(browser, user, authorizeUrl(pairwiseClient, { response_type: 'id_token', scope: 'openid', nonce: 'n' })));
      const implicitSub = (await verified(implicit.id_token, pairwiseClient)).sub;
      expect(implicitSub).not.toBe(userId);
      const pkce = newPkce();
      const code = new URL((await browser.get(authorizeUrl(pairwiseClient, { scope: 'openid', code_challenge: pkce.challenge, code_challenge_method: 'S256' }))).location!).searchParams.get('code')!;
      const tokens = await tokenRequest(app, pairwiseClient, { grant_type: 'authorization_code', code, redirect_uri: pairwiseClient.redirectUri, code_verifier: pkce.verifier });
      expect((await verified(tokens.body.id_token as string, pairwiseClient)).sub).toBe(implicitSub);
    });

    it.each<[string, string, Record<string, string>]>([
      ['without a nonce (Core §3.2.2.1: REQUIRED)', 'invalid_request', { scope: 'openid', nonce: '' }],
      ['without the openid scope', 'invalid_request', { scope: 'notes:read', nonce: 'n' }],
      ['with code_challenge (there is no code to bind)', 'invalid_request', { scope: 'openid', nonce: 'n', code_challenge: 'a'.repeat(43), code_challenge_method: 'S256' }],
    ])('refused %s: %s posted back, no ID token', async (_case, error, params) => {
      const page = await new Browser(app.baseUrl).get(authorizeUrl(idTokenClient, { response_type: 'id_token', response_mode: 'form_post', state: 'R', ...params }));
      expect(formPostedTo(page, IMPLICIT_RP)).toEqual({ error, error_description: expect.any(String), state: 'R', iss: issuer });
    });

    it('refused in the query (it would put the ID token in logs): invalid_request in the fragment', async () => {
      const page = await new Browser(app.baseUrl).get(authorizeUrl(idTokenClient, { response_type: 'id_token', response_mode: 'query', scope: 'openid', nonce: 'n', state: 'Q' }));
      expect(fragmentOf(page)).toEqual({ error: 'invalid_request', error_description: expect.any(String), state: 'Q', iss: issuer });
    });

    it.each<[string, () => RegisteredClient]>([
      ['a client registered for the code flow only', () => codeClient],
      ['a client registered for the implicit grant with response_type token only', () => tokenOnlyClient],
    ])('refused for %s: unsupported_response_type (as response_type=token), no ID token, nothing stored', async (_case, client) => {
      const before = await tokenRows(client().clientId);
      const page = await new Browser(app.baseUrl).get(authorizeUrl(client(), { response_type: 'id_token', response_mode: 'form_post', scope: 'openid', nonce: 'n', state: 'U' }));
      expect(formPostedTo(page, client().redirectUri)).toEqual({ error: 'unsupported_response_type', error_description: expect.stringContaining('for this client'), state: 'U', iss: issuer });
      expect(await tokenRows(client().clientId)).toEqual(before);
    });
  });

  describe('claims in the ID token (Core §5.4): the same as userinfo, per client', () => {
    async function codeFlow(client: RegisteredClient, scope: string): Promise<{ idToken: JWTPayload; userinfo: Record<string, unknown> }> {
      const pkce = newPkce();
      const page = await authorizeAsUser(new Browser(app.baseUrl), user, authorizeUrl(client, { scope, nonce: 'n', code_challenge: pkce.challenge, code_challenge_method: 'S256' }));
      const code = new URL(page.location!).searchParams.get('code')!;
      const tokens = await postToken(app, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier }, { authorization: basicAuth(client.clientId, client.clientSecret!) });
      expect(tokens.status).toBe(200);
      const userinfo = (await (await fetch(app.url('/userinfo'), { headers: { authorization: `Bearer ${tokens.body.access_token as string}` } })).json()) as Record<string, unknown>;
      return { idToken: await verified(tokens.body.id_token as string, client), userinfo };
    }
    const PERSON_CLAIMS = ['name', 'given_name', 'family_name', 'preferred_username', 'updated_at', 'email', 'email_verified'];
    const pick = (claims: Record<string, unknown>) => Object.fromEntries(Object.entries(claims).filter(([name]) => name === 'sub' || PERSON_CLAIMS.includes(name)));

    it('by default the code flow\'s ID token carries every claim userinfo answers, with the same values', async () => {
      const { idToken, userinfo } = await codeFlow(codeClient, 'openid profile email');
      expect(pick(idToken)).toEqual(userinfo);
      expect(userinfo).toMatchObject({ name: 'Alice Liddell', email: 'alice@example.com' });
    });

    it('only the claims the scopes grant: openid email gives no name', async () => {
      const { idToken, userinfo } = await codeFlow(codeClient, 'openid email');
      expect(pick(idToken)).toEqual(userinfo);
      expect(idToken).not.toHaveProperty('name');
    });

    it('a client registered with id_token_claims false gets a minimal ID token; its userinfo answers as before', async () => {
      const { idToken, userinfo } = await codeFlow(minimalClient, 'openid profile email');
      expect(pick(idToken)).toEqual({ sub: userId });
      expect(userinfo).toMatchObject({ sub: userId, name: 'Alice Liddell', email: 'alice@example.com' });
    });
  });

  describe('registration (RFC 7591): id_token_claims and response_types id_token', () => {
    let adminToken: string;
    beforeAll(async () => {
      const admin = await app.createClient({ name: 'admin', redirectUris: [], grantTypes: ['client_credentials'], scope: 'clients:register' });
      adminToken = (await tokenRequest(app, admin, { grant_type: 'client_credentials' })).body.access_token as string;
    });
    async function register(body: Record<string, unknown>): Promise<{ status: number; json: Record<string, unknown> }> {
      const response = await fetch(app.url('/register'), { method: 'POST', headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    }
    const base = { client_name: 'Registered', redirect_uris: ['https://registered.example/cb'], scope: 'notes:read' };

    it('id_token_claims false is stored and shown; absent, it is not shown (the server default applies)', async () => {
      expect((await register({ ...base, id_token_claims: false })).json).toMatchObject({ id_token_claims: false });
      expect((await register(base)).json).not.toHaveProperty('id_token_claims');
    });

    it('response_types code and id_token with the implicit grant are stored as registered, without token', async () => {
      const reply = await register({ ...base, grant_types: ['authorization_code', 'implicit'], response_types: ['code', 'id_token'] });
      expect(reply.status).toBe(201);
      expect(reply.json).toMatchObject({ grant_types: ['authorization_code', 'implicit'], response_types: ['code', 'id_token'] });
      const page = await new Browser(app.baseUrl).get(authorizeUrl({ clientId: reply.json.client_id as string, redirectUri: base.redirect_uris[0] }, { response_type: 'token', scope: 'notes:read', state: 'T' }));
      expect(Object.fromEntries(new URL(page.location!).searchParams)).toMatchObject({ error: 'unsupported_response_type', state: 'T' });
    });

    it.each<[string, Record<string, unknown>]>([
      ['id_token_claims that is not a boolean', { id_token_claims: 'no' }],
      ['response_types id_token without the implicit grant', { grant_types: ['authorization_code'], response_types: ['code', 'id_token'] }],
      ['the combined response type "code id_token"', { grant_types: ['authorization_code', 'implicit'], response_types: ['code id_token'] }],
    ])('refuses %s with invalid_client_metadata, registering nothing', async (_case, change) => {
      const before = (await app.dataSource.query<unknown[]>('SELECT id FROM clients')).length;
      const reply = await register({ ...base, ...change });
      expect({ status: reply.status, error: reply.json.error }).toEqual({ status: 400, error: 'invalid_client_metadata' });
      expect((await app.dataSource.query<unknown[]>('SELECT id FROM clients')).length).toBe(before);
    });

    it('a client managing itself cannot add id_token to its response types (RFC 7592 §2.2), and nothing changes', async () => {
      const open = await register({ ...base, grant_types: ['authorization_code', 'implicit'], response_types: ['code', 'token'] });
      const update = await fetch(app.url(new URL(open.json.registration_client_uri as string).pathname), {
        method: 'PUT',
        headers: { authorization: `Bearer ${open.json.registration_access_token as string}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ...base, client_id: open.json.client_id, grant_types: ['authorization_code', 'implicit'], response_types: ['code', 'token', 'id_token'] }),
      });
      expect(update.status).toBe(400);
      expect(await update.json()).toMatchObject({ error: 'invalid_client_metadata', error_description: expect.stringContaining('response_types') });
      const [row] = await app.dataSource.query<{ response_types: string }[]>(`SELECT response_types FROM clients WHERE id = '${open.json.client_id as string}'`);
      expect(JSON.parse(row.response_types)).toEqual(['code', 'token']);
    });
  });

  describe('the server-wide default ID_TOKEN_CLAIMS=false', () => {
    let minimalServer: TestApp;
    beforeAll(async () => {
      minimalServer = await TestApp.start({ ID_TOKEN_CLAIMS: 'false' });
    });
    // Closed, not stopped: the database is this file's, dropped once by the outer afterAll.
    afterAll(async () => minimalServer?.app.close());

    it('gives minimal ID tokens to clients that chose nothing, and the claims to one registered with id_token_claims true', async () => {
      const person = await minimalServer.createUser();
      const chooseNothing = await minimalServer.createClient({ name: 'Default', redirectUris: ['https://default.example/cb'], scope: 'notes:read' });
      const wantsClaims = await minimalServer.createClient({ name: 'Wants claims', redirectUris: ['https://claims.example/cb'], scope: 'notes:read', openId: { id_token_claims: true } });
      const keys = createRemoteJWKSet(new URL(minimalServer.url('/.well-known/jwks.json')));
      const idTokenOf = async (client: RegisteredClient): Promise<JWTPayload> => {
        const pkce = newPkce();
        const page = await authorizeAsUser(new Browser(minimalServer.baseUrl), person, authorizeUrl(client, { scope: 'openid profile', code_challenge: pkce.challenge, code_challenge_method: 'S256' }));
        const code = new URL(page.location!).searchParams.get('code')!;
        const tokens = await tokenRequest(minimalServer, client, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier });
        return (await jwtVerify(tokens.body.id_token as string, keys, { audience: client.clientId })).payload;
      };
      expect(await idTokenOf(chooseNothing)).not.toHaveProperty('preferred_username');
      expect(await idTokenOf(wantsClaims)).toMatchObject({ preferred_username: person.username });
    });
  });
});
