import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { createApp } from '../../src/app.setup.js';
import { UsersService } from '../../src/users/users.service.js';
import { freePort } from './app-at-issuer.js';
import { Browser, hiddenFields } from './browser.js';
import type { SoftAuthenticator } from './soft-authenticator.js';
import { createTestDatabase, dropTestDatabase } from './test-database.js';

/**
 * The real app at an issuer named by a domain, http://localhost:<port> (WebAuthn needs one; a
 * browser counts localhost as a secure context), listening on loopback. Requests go to 127.0.0.1:
 * the origin the server checks is the one inside clientDataJSON, not the Host header.
 */
export class PasskeyTestApp {
  private constructor(
    readonly nest: NestFastifyApplication,
    readonly origin: string,
    readonly baseUrl: string,
  ) {}

  /** `env.ISSUER` may name another instance's issuer: a second instance behind the same name, as behind a load balancer. */
  static async start(env: Record<string, string> = {}): Promise<PasskeyTestApp> {
    const port = await freePort();
    Object.assign(process.env, { ISSUER: `http://localhost:${port}` }, env);
    await createTestDatabase();
    const nest = await createApp({ level: 'error' });
    await nest.listen(port, '127.0.0.1');
    await nest.getHttpAdapter().getInstance().ready();
    return new PasskeyTestApp(nest, process.env.ISSUER!, `http://127.0.0.1:${port}`);
  }

  async stop(): Promise<void> {
    await this.nest.close();
    await dropTestDatabase();
  }

  get dataSource(): DataSource {
    return this.nest.get<DataSource>(getDataSourceToken());
  }

  browser(): Browser {
    return new Browser(this.baseUrl);
  }

  async createUser(username = `user_${Math.random().toString(36).slice(2, 10)}`, password = 'correct horse battery staple'): Promise<{ id: string; username: string; password: string }> {
    const user = await this.nest.get(UsersService).create(username, password);
    return { id: user.id, username, password };
  }

  /** A browser signed in with the password (just now, so it may add and remove passkeys). */
  async signedIn(user: { username: string; password: string }): Promise<Browser> {
    const browser = this.browser();
    const login = await browser.get('/login');
    const done = await browser.submit(login, '/login', { username: user.username, password: user.password });
    if (done.status !== 303) throw new Error(`password sign-in failed: ${done.status}`);
    return browser;
  }

  /** The CSRF token on the account page's passkey form (or its remove forms). */
  async accountCsrf(browser: Browser): Promise<string> {
    const page = await browser.get('/account/passkeys');
    const token = hiddenFields(page.body, '/account/passkeys').csrf_token ?? hiddenFields(page.body, '/account/passkeys/remove').csrf_token;
    if (!token) throw new Error(`no CSRF token on the account page (${page.status})`);
    return token;
  }

  /** Adds a passkey the way the account page's script does; returns the registration's answer. */
  async addPasskey(browser: Browser, authenticator: SoftAuthenticator, name = 'Test key', overrides: Parameters<SoftAuthenticator['register']>[1] = {}) {
    const csrf = await this.accountCsrf(browser);
    const options = await browser.postJson('/account/passkeys/registration/options', { csrf_token: csrf });
    if (options.status !== 200) return options;
    return browser.postJson('/account/passkeys/registration', { csrf_token: csrf, name, response: authenticator.register(JSON.parse(options.body), overrides) });
  }

  /** Signs in with the passkey alone, as the sign-in page's script does; `response` may replace the authenticator's answer. */
  async passkeySignIn(browser: Browser, authenticator: SoftAuthenticator, overrides: Parameters<SoftAuthenticator['assert']>[1] = {}, returnTo = '/') {
    const login = await browser.get('/login');
    const csrf = hiddenFields(login.body, '/login').csrf_token;
    const options = await browser.postJson('/login/passkey/options', { csrf_token: csrf });
    const response = authenticator.assert(JSON.parse(options.body), overrides);
    const answer = await browser.postJson('/login/passkey', { csrf_token: csrf, return_to: returnTo, response });
    return { answer, response, csrf };
  }
}

export async function rowCount(dataSource: DataSource, table: 'passkeys' | 'passkey_challenges'): Promise<number> {
  const [row] = (await dataSource.query(`SELECT COUNT(*) AS "n" FROM "${table}"`)) as { n: string | number }[];
  return Number(row.n);
}

export async function auditActions(dataSource: DataSource): Promise<string[]> {
  const rows = (await dataSource.query(`SELECT "action" FROM "audit_events" ORDER BY "id"`)) as { action: string }[];
  return rows.map((row) => row.action);
}
