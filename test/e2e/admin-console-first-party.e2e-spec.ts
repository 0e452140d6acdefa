/**
 * Issue 48: the admin console is the server's own client, so signing in to it asks for no consent
 * (clients/first-party.ts), while what the sign-in gets is still only what the person's roles
 * allow. No registration can make a client first party: not its name, not any metadata, not even
 * the console's client id on someone else's redirect URI. The real app at its issuer.
 */
import { jest } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { ClientsService } from '../../src/clients/clients.service.js';
import { CONSOLE_CLIENT_ID } from '../../src/clients/console-client-id.js';
import { Clock } from '../../src/common/clock.js';
import { CLI_ADMINISTRATOR } from '../../src/clients/client-change-policy.js';
import { ADMIN_API, tableSnapshot } from '../helpers/admin-api.js';
import { consolePerson, isCodePage, signInToConsole, type ConsolePerson } from '../helpers/admin-console.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { Browser, hiddenFields, isConsentPage, isLoginPage, type Page } from '../helpers/browser.js';
import { basicAuth, newPkce } from '../helpers/oauth-flow.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { totpCode } from '../helpers/totp.js';

/** Everything the console's registration holds, as a client administrator or an owner could type it. */
const CONSOLE_LOOKALIKE = { client_name: 'Latchkey admin console', grant_types: ['authorization_code', 'refresh_token'], token_endpoint_auth_method: 'client_secret_basic', require_auth_time: true };

describe('the admin console is first party: no consent page, still only what the roles allow (issue 48)', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  let db: DataSource;
  let offset = 0;
  const now = () => new Date(Date.now() + offset);
  const callback = () => `${issuer.origin}/admin/callback`;

  beforeAll(async () => {
    ({ nest, issuer } = await startAtIssuer({ LOGIN_THROTTLE_ENABLED: 'false' }));
    db = nest.get<DataSource>(getDataSourceToken());
    jest.spyOn(nest.get(Clock), 'now').mockImplementation(now);
  });
  afterAll(async () => {
    await nest?.close();
    await dropTestDatabase();
    delete process.env.LOGIN_THROTTLE_ENABLED;
  });

  /** Every page a person passes through from /admin, as "status path", answering the sign-in and the code; stops at the first other page. */
  async function walkSignIn(browser: Browser, person: ConsolePerson): Promise<{ trail: string[]; last: Page }> {
    offset += 30_000;
    const trail: string[] = [];
    let page = await browser.get('/admin');
    for (let hop = 0; hop < 25; hop++) {
      trail.push(`${page.status} ${page.location === undefined ? '' : new URL(page.location, issuer).pathname}`.trim());
      if (page.status >= 300 && page.status < 400 && page.location) page = await browser.get(page.location);
      else if (isLoginPage(page)) page = await browser.submit(page, '/login', { username: person.username, password: person.password });
      else if (isCodePage(page)) page = await browser.post('/login/code', { ...hiddenFields(page.body, '/login/code'), code: totpCode(person.key!, now()) });
      else return { trail, last: page };
    }
    throw new Error(`The sign-in did not end: ${trail.join(' → ')}`);
  }

  /** GET /authorize for `clientId` in `browser`'s session, as a code flow with PKCE. */
  async function authorize(browser: Browser, clientId: string, redirectUri: string, scope = 'openid'): Promise<Page> {
    const query = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, scope, state: 's', nonce: 'n', code_challenge: newPkce().challenge, code_challenge_method: 'S256' });
    return browser.get(`/authorize?${query}`);
  }

  /** A client_credentials token of a service client the CLI registered for `scope`. */
  async function serviceToken(scope: string): Promise<string> {
    const { client, secret } = await nest.get(ClientsService).create({ name: `Automation ${scope}`, redirectUris: [], grantTypes: ['client_credentials'] as never, scope });
    const response = await fetch(`${issuer.origin}/token`, { method: 'POST', headers: { authorization: basicAuth(client.id, secret!), 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'client_credentials', scope }) });
    expect(response.status).toBe(200);
    return String(((await response.json()) as Record<string, unknown>).access_token);
  }

  async function sendJson(method: string, path: string, token: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await fetch(`${issuer.origin}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  const consoleTokenScopes = async (userId: string) =>
    ((await db.query(`SELECT "scope" FROM "tokens" WHERE "client_id" = '${CONSOLE_CLIENT_ID}' AND "user_id" = '${userId}'`)) as { scope: string }[]).map((row) => row.scope);
  const consoleConsents = async (userId: string) => db.query(`SELECT "scope" FROM "consents" WHERE "client_id" = '${CONSOLE_CLIENT_ID}' AND "user_id" = '${userId}'`) as Promise<unknown[]>;

  /** An owner signed in to the console: the browser's session then reaches a second factor, which no other client's request asks again. */
  async function signedInOwner(): Promise<Browser> {
    const owner = await consolePerson(nest, ['owner']);
    offset += 30_000;
    const browser = new Browser(issuer.origin);
    expect((await signInToConsole(browser, owner, now)).status).toBe(200);
    return browser;
  }

  it("takes an owner's first sign-in from the password and the code straight back to the console: no consent page, no consent recorded", async () => {
    const owner = await consolePerson(nest, ['owner']);
    const browser = new Browser(issuer.origin);
    const { trail, last } = await walkSignIn(browser, owner);
    expect(trail).toEqual([
      '303 /admin/sign-in',
      '303 /authorize',
      '200', // the sign-in page
      '303 /login/code',
      '200', // the one-time code
      '303 /authorize',
      '302 /admin/callback',
      '303 /admin',
      '200',
    ]);
    expect(last.body).toContain('<h1 id="page-title">Dashboard</h1>');
    // The console asked every admin scope; the tokens carry the one the owner's role allows, and nothing is recorded that the person would have to withdraw.
    const scopes = await consoleTokenScopes(owner.userId);
    expect(scopes.length).toBeGreaterThan(0);
    for (const scope of scopes) expect(scope.split(' ').sort()).toEqual(['admin:owner', 'openid']);
    expect(await consoleConsents(owner.userId)).toEqual([]);
    expect(await db.query(`SELECT "id" FROM "audit_events" WHERE "action" = 'consent.given' AND "actor" = 'user:${owner.userId}'`)).toEqual([]);
    // The account page: the console among the applications signed in through this session, not among those holding access.
    const account = await browser.get('/account');
    expect(account.body).toContain('Applications signed in through it: Latchkey admin console.');
    expect(account.body).toContain('No application has access to your data.');
  });

  it('narrows a helpdesk sign-in to admin:people, and refuses a person without any role on the 403 page with no admin scope in their token', async () => {
    const helpdesk = await consolePerson(nest, ['helpdesk']);
    expect((await walkSignIn(new Browser(issuer.origin), helpdesk)).last.status).toBe(200);
    const helpdeskScopes = await consoleTokenScopes(helpdesk.userId);
    expect(helpdeskScopes.length).toBeGreaterThan(0);
    for (const scope of helpdeskScopes) expect(scope.split(' ').sort()).toEqual(['admin:people', 'openid']);

    const nobody = await consolePerson(nest, []);
    const { trail, last } = await walkSignIn(new Browser(issuer.origin), nobody);
    expect(trail).not.toContain('200 /consent');
    expect(isConsentPage(last)).toBe(false);
    expect(last.status).toBe(403);
    expect(last.body).toContain('Not an administrator');
    const scopes = await consoleTokenScopes(nobody.userId);
    expect(scopes.length).toBeGreaterThan(0);
    for (const scope of scopes) expect(scope.split(' ')).toEqual(['openid']);
  });

  it("still asks consent for the console when its request says prompt=consent (Core §3.1.2.1), and of another client in the owner's session", async () => {
    const browser = await signedInOwner();
    const { client } = await nest.get(ClientsService).create({ name: 'Payroll', redirectUris: ['https://payroll.example/cb'], scope: 'openid' });
    expect(isConsentPage(await authorize(browser, client.id, 'https://payroll.example/cb'))).toBe(true);

    const query = new URLSearchParams({ response_type: 'code', client_id: CONSOLE_CLIENT_ID, redirect_uri: callback(), scope: 'openid admin:read', state: 's', nonce: 'n', code_challenge: newPkce().challenge, code_challenge_method: 'S256' });
    expect(isConsentPage(await browser.get(`/authorize?${query}&prompt=consent`))).toBe(true);
    // Without it, straight to the console's callback.
    const straight = await browser.get(`/authorize?${query}`);
    expect(straight.status).toBe(302);
    expect(straight.location).toMatch(new RegExp(`^${callback()}\\?code=`));
  });

  it('asks consent of a client registered over /register as the console, whatever metadata it sends (ignored fields, the console\'s name and callback)', async () => {
    const browser = await signedInOwner();
    const registrar = await serviceToken('clients:register');
    const registered = await sendJson('POST', '/register', registrar, {
      ...CONSOLE_LOOKALIKE,
      scope: 'openid',
      redirect_uris: [callback()],
      post_logout_redirect_uris: [`${issuer.origin}/admin/signed-out`],
      client_id: CONSOLE_CLIENT_ID,
      first_party: true,
      skip_consent: true,
      trusted: true,
      software_id: CONSOLE_CLIENT_ID,
    });
    expect(registered.status).toBe(201);
    expect(registered.body.client_id).not.toBe(CONSOLE_CLIENT_ID);
    expect(registered.body.client_name).toBe('Latchkey admin console');
    expect(isConsentPage(await authorize(browser, String(registered.body.client_id), callback()))).toBe(true);
  });

  it("asks consent of a client an owner registers over the admin API with the console's name, scope, callback and settings; a field that is none is refused", async () => {
    const browser = await signedInOwner();
    const owner = await serviceToken('admin:owner');
    const lookalike = { ...CONSOLE_LOOKALIKE, scope: 'openid admin:read admin:people admin:clients admin:owner', redirect_uris: [callback()], post_logout_redirect_uris: [`${issuer.origin}/admin/signed-out`], minimum_acr: 'urn:latchkey:acr:mfa' };
    const created = await sendJson('POST', `${ADMIN_API}/clients`, owner, lookalike);
    expect(created.status).toBe(201);
    expect(isConsentPage(await authorize(browser, String(created.body.client_id), callback(), 'openid admin:owner'))).toBe(true);

    const before = await tableSnapshot(db, ['clients']);
    for (const field of ['first_party', 'skip_consent', 'trusted', 'client_id']) {
      const refused = await sendJson('POST', `${ADMIN_API}/clients`, owner, { ...lookalike, [field]: field === 'client_id' ? CONSOLE_CLIENT_ID : true });
      expect([field, refused.status, refused.body.error]).toEqual([field, 400, 'invalid_client_metadata']);
    }
    expect(await tableSnapshot(db, ['clients'])).toBe(before);
  });

  it("asks consent of a clients:apply client named as the console; a document cannot claim the console's id before the console registers it", async () => {
    const browser = await signedInOwner();
    const clientAdmin = await serviceToken('admin:clients');
    const apply = (client: Record<string, unknown>) => sendJson('PUT', `${ADMIN_API}/client-declarations`, clientAdmin, { document: { clients: [client] }, keep_unlisted: true });
    const publicLookalike = { ...CONSOLE_LOOKALIKE, token_endpoint_auth_method: 'none', scope: 'openid' };
    expect((await apply({ ...publicLookalike, client_id: 'latchkey-admin-console-2', redirect_uris: [callback()] })).status).toBe(200);
    expect(isConsentPage(await authorize(browser, 'latchkey-admin-console-2', callback()))).toBe(true);

    // Before the console's first use (here: its client deleted) its id is free; a public client there would keep the console from signing anyone in.
    await nest.get(ClientsService).delete(CONSOLE_CLIENT_ID, CLI_ADMINISTRATOR);
    const before = await tableSnapshot(db, ['clients']);
    const claimed = await apply({ ...publicLookalike, client_id: CONSOLE_CLIENT_ID, redirect_uris: ['https://squatter.example/cb'] });
    expect([claimed.status, claimed.body.error]).toEqual([400, 'invalid_client_metadata']);
    expect(claimed.body.error_description).toMatch(/admin console's own/);
    expect(await tableSnapshot(db, ['clients'])).toBe(before);
    // The console registers it again on its next use.
    expect((await walkSignIn(new Browser(issuer.origin), await consolePerson(nest, ['owner']))).last.status).toBe(200);
  });

  it("asks consent when the console's client is sent anywhere but its own callback, even by an owner who moved its redirect URIs; the console puts them back", async () => {
    const browser = await signedInOwner();
    const owner = await serviceToken('admin:owner');
    const moved = await sendJson('PATCH', `${ADMIN_API}/clients/${CONSOLE_CLIENT_ID}`, owner, { redirect_uris: [callback(), 'https://elsewhere.example/cb'] });
    expect(moved.status).toBe(200);
    expect(isConsentPage(await authorize(browser, CONSOLE_CLIENT_ID, 'https://elsewhere.example/cb'))).toBe(true);
    expect((await authorize(browser, CONSOLE_CLIENT_ID, callback())).location).toMatch(new RegExp(`^${callback()}\\?code=`));

    expect((await walkSignIn(new Browser(issuer.origin), await consolePerson(nest, ['owner']))).last.status).toBe(200);
    expect((await nest.get(ClientsService).findById(CONSOLE_CLIENT_ID))?.redirectUris).toEqual([callback()]);
  });
});
