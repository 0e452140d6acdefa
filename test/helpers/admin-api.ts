import type { DataSource } from 'typeorm';
import { GrantType } from '../../src/common/oauth.constants.js';
import { ADMIN_API as ADMIN_API_PATH } from '../../src/admin/admin-reply.js';
import { AdminRolesService } from '../../src/admin/admin-roles.service.js';
import { ADMIN_SCOPES, type AdminRole } from '../../src/scopes/admin-scopes.js';
import { UsersService } from '../../src/users/users.service.js';
import { obtainTokens } from './api-client.js';
import { Browser, isLoginPage } from './browser.js';
import { authorizeAsUser, authorizeUrl, basicAuth, newPkce, redirectParams, tokenRequest } from './oauth-flow.js';
import type { RegisteredClient, TestApp, TestUser } from './test-app.js';

/** Where the admin API is served, as the controllers declare it. */
export const ADMIN_API = `/${ADMIN_API_PATH}`;
export const ALL_ADMIN_SCOPES = Object.keys(ADMIN_SCOPES).join(' ');

export interface AdminResponse {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

/** A person signed in through the console-like client, with their roles and the token the code flow gave them. */
export interface SignedInAdmin {
  user: TestUser;
  userId: string;
  token: string;
  /** The scope the token endpoint answered (narrowed to the person's roles). */
  scope: string;
}

/**
 * The admin API as its callers reach it in tests: a client registered (by the CLI's owner rights)
 * for every admin scope, as the console is; people signed in through it by the real code flow,
 * with roles granted as `users:roles` grants them; service clients with client_credentials.
 */
export class AdminApi {
  private constructor(
    readonly app: TestApp,
    readonly console: RegisteredClient,
  ) {}

  static async setUp(app: TestApp): Promise<AdminApi> {
    const console = await app.createClient({ name: 'Admin console (test)', scope: `${ALL_ADMIN_SCOPES} notes:read` });
    return new AdminApi(app, console);
  }

  /** A new person holding `roles`, signed in through the console client asking for `scope` (every admin scope by default). */
  async signIn(roles: readonly AdminRole[], scope = ALL_ADMIN_SCOPES): Promise<SignedInAdmin> {
    const user = await this.app.createUser();
    const userId = (await this.app.app.get(UsersService).require(user.username)).id;
    for (const role of roles) await this.app.app.get(AdminRolesService).grant(userId, role, 'cli');
    const tokens = await obtainTokens(this.app, this.console, user, scope);
    return { user, userId, token: tokens.accessToken, scope: tokens.scope };
  }

  /** A service client registered (by the CLI) for `scope` with client_credentials, and its token. */
  async serviceToken(scope: string): Promise<{ client: RegisteredClient; token: string }> {
    const client = await this.app.createClient({ name: 'Admin automation (test)', scope, grantTypes: [GrantType.ClientCredentials], redirectUris: [] });
    const response = await fetch(this.app.url('/token'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(client.clientId, client.clientSecret!) },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope }).toString(),
    });
    const body = (await response.json()) as Record<string, unknown>;
    if (response.status !== 200) throw new Error(`client_credentials answered ${response.status}: ${JSON.stringify(body)}`);
    return { client, token: String(body.access_token) };
  }

  /** A request to the admin API; `token` undefined sends none; `contentType` replaces JSON's (a merge patch, a wrong type). */
  async request(method: string, path: string, token?: string, body?: unknown, contentType = 'application/json'): Promise<AdminResponse> {
    const headers: Record<string, string> = {};
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = contentType;
    const response = await fetch(this.app.url(ADMIN_API + path), { method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
    const text = await response.text();
    return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>), headers: response.headers };
  }
}

/**
 * `user` signs in through `client` in a browser of their own (a session, a consent, tokens): the
 * person an administrator then looks at. The browser stays signed in; the token response is returned.
 */
export async function signInThrough(app: TestApp, client: RegisteredClient, user: TestUser, scope: string): Promise<{ browser: Browser; tokens: Record<string, unknown> }> {
  const browser = new Browser(app.baseUrl);
  const pkce = newPkce();
  const page = await authorizeAsUser(browser, user, authorizeUrl(client, { scope, state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256' }));
  const code = redirectParams(page).get('code');
  if (!code) throw new Error(`No code in ${page.location}`);
  const result = await tokenRequest(app, client, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier });
  if (result.status !== 200) throw new Error(`Token request failed with ${result.status}: ${JSON.stringify(result.body)}`);
  return { browser, tokens: result.body };
}

/** Whether the browser's session still signs its person in (GET /login redirects instead of showing the form). */
export async function stillSignedIn(browser: Browser): Promise<boolean> {
  const page = await browser.get('/login');
  return page.status === 302 && !isLoginPage(page);
}

/**
 * Every row of the tables, as JSON: taken before and after a refused request, the two must be
 * equal ("nothing changed in the database").
 */
export async function tableSnapshot(dataSource: DataSource, tables: readonly string[]): Promise<string> {
  const rows: Record<string, unknown> = {};
  for (const table of tables) rows[table] = ((await dataSource.query(`SELECT * FROM "${table}"`)) as unknown[]).map((row) => JSON.stringify(row)).sort();
  return JSON.stringify(rows);
}
