import { createHash } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import { appConfig } from '../../src/config/app.config.js';
import { UsersService } from '../../src/users/users.service.js';
import { Browser, hiddenFields, isConsentPage, sessionCookie, type Page } from '../helpers/browser.js';
import { authorizeAsUser, authorizeUrl, basicAuth, newPkce, postToken, tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';

const RP = 'https://rp.example/callback';
const IMPLICIT_RP = 'https://quick-start.example/callback';
const HOSTILE_STATE = '"><script>alert(document.cookie)</script><input value="';

/** The parameters a form_post page (Form Post Response Mode §2) posts to `redirectUri`, after checking the page is one. */
function postedTo(page: Page, redirectUri: string): Record<string, string> {
  expect({ status: page.status, location: page.location }).toEqual({ status: 200, location: undefined });
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  expect(page.headers.get('cache-control')).toBe('no-store');
  expect(page.body).toContain(`<form method="post" action="${redirectUri}">`);
  return hiddenFields(page.body, redirectUri);
}

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

  describe('response_mode=form_post (Form Post Response Mode §2)', () => {
    it('a code is posted by an auto-submitting form: code, state and iss as hidden fields, one inline script allowed by its hash, a button without script; the code redeems', async () => {
      const pkce = newPkce();
      const browser = new Browser(app.baseUrl);
      const page = await authorizeAsUser(browser, user, authorizeUrl(codeClient, { scope: 'openid notes:read', state: 'S-1', nonce: 'N-1', response_mode: 'form_post', code_challenge: pkce.challenge, code_challenge_method: 'S256' }));
      const posted = postedTo(page, RP);
      expect(posted).toEqual({ code: expect.any(String), state: 'S-1', iss: issuer });
      // The one script, allowed by its SHA-256 and nothing else; the form may go to the client's origin only.
      const scripts = [...page.body.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((match) => match[1]);
      expect(scripts).toHaveLength(1);
      expect(page.body.match(/<script/g)).toHaveLength(1);
      const hash = createHash('sha256').update(scripts[0]).digest('base64');
      const csp = page.headers.get('content-security-policy')!;
      expect(csp).toContain(`script-src 'sha256-${hash}';`);
      expect(csp).toContain("form-action 'self' https://rp.example;");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(page.body).toMatch(/<button type="submit">/);
      const tokens = await tokenRequest(app, codeClient, { grant_type: 'authorization_code', code: posted.code, redirect_uri: RP, code_verifier: pkce.verifier });
      expect(tokens.status).toBe(200);
      expect(tokens.body.id_token).toEqual(expect.any(String));
    });

    it('our sign-in session still works for the flow (SameSite=Lax, the client receives the POST): signed in and consented, the next request is posted at once', async () => {
      const client = await app.createClient({ name: 'Fresh app', redirectUris: [RP], scope: 'notes:read' });
      const browser = new Browser(app.baseUrl);
      const first = await browser.get(authorizeUrl(client, { scope: 'notes:read', state: 'warm', response_mode: 'form_post', ...s256() }));
      const login = await browser.submit(first, '/login', { username: user.username, password: user.password });
      expect(sessionCookie(login)).toMatch(/SameSite=Lax/i);
      const consent = await browser.get(login.location!);
      expect(isConsentPage(consent)).toBe(true);
      postedTo(await browser.submit(consent, '/consent', { decision: 'allow' }), RP);
      const again = await browser.get(authorizeUrl(client, { scope: 'notes:read', state: 'again', response_mode: 'form_post', ...s256() }));
      expect(postedTo(again, RP)).toEqual({ code: expect.any(String), state: 'again', iss: issuer });
    });

    it('a hostile state is posted back exactly as sent and never echoed unescaped: no markup of its own reaches the page', async () => {
      const page = await authorizeAsUser(new Browser(app.baseUrl), user, authorizeUrl(codeClient, { scope: 'notes:read', state: HOSTILE_STATE, response_mode: 'form_post', ...s256() }));
      expect(postedTo(page, RP).state).toBe(HOSTILE_STATE);
      expect(page.body).not.toContain('<script>alert');
      expect(page.body).not.toContain('"><');
      expect(page.body).toContain('&quot;&gt;&lt;script&gt;alert(document.cookie)&lt;/script&gt;');
      expect(page.body.match(/<script/g)).toHaveLength(1);
      expect(page.body.match(/<input /g)).toHaveLength(3);
    });

    it('an error for a verified client and redirect URI is posted too: error, error_description, state and iss, hostile state escaped', async () => {
      const page = await new Browser(app.baseUrl).get(authorizeUrl(codeClient, { scope: 'notes:delete-everything', state: HOSTILE_STATE, response_mode: 'form_post', ...s256() }));
      expect(postedTo(page, RP)).toEqual({ error: 'invalid_scope', error_description: expect.any(String), state: HOSTILE_STATE, iss: issuer });
      expect(page.body).not.toContain('<script>alert');
    });

    it('the person denying consent is posted as access_denied', async () => {
      const client = await app.createClient({ name: 'Refused app', redirectUris: [RP], scope: 'notes:read' });
      const page = await authorizeAsUser(new Browser(app.baseUrl), user, authorizeUrl(client, { scope: 'notes:read', state: 'D', response_mode: 'form_post', ...s256() }), 'deny');
      expect(postedTo(page, RP)).toEqual({ error: 'access_denied', error_description: expect.any(String), state: 'D', iss: issuer });
    });

    it('a redirect URI that is not registered gets no form and no redirect: an error page for the person, nothing posted anywhere', async () => {
      const page = await new Browser(app.baseUrl).get(authorizeUrl(codeClient, { redirect_uri: 'https://attacker.example/cb', scope: 'notes:read', state: 'X', response_mode: 'form_post', ...s256() }));
      expect(page.status).toBe(400);
      expect(page.location).toBeUndefined();
      expect(page.body).not.toContain('attacker.example');
      expect(page.headers.get('content-security-policy')).not.toContain('attacker.example');
      expect(page.headers.get('content-security-policy')).not.toContain('script-src');
    });
  });

  describe('response_type=id_token (Core §3.2), for clients registered for it', () => {
    it('posts an ID token and no access token: nonce, the profile and email claims (no userinfo to ask, Core §5.4), no at_hash; nothing stored', async () => {
      const page = await authorizeAsUser(new Browser(app.baseUrl), user, authorizeUrl(idTokenClient, { response_type: 'id_token', response_mode: 'form_post', scope: 'openid profile email', nonce: 'nonce-1', state: 'S-2' }));
      const posted = postedTo(page, IMPLICIT_RP);
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
      expect(postedTo(page, IMPLICIT_RP)).toEqual({ error, error_description: expect.any(String), state: 'R', iss: issuer });
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
      expect(postedTo(page, client().redirectUri)).toEqual({ error: 'unsupported_response_type', error_description: expect.stringContaining('for this client'), state: 'U', iss: issuer });
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
});

function s256(): Record<string, string> {
  return { code_challenge: newPkce().challenge, code_challenge_method: 'S256' };
}
