/**
 * Secrets never rest in plain text: after a complete flow (with the failures an attacker or a
 * buggy client would cause), no table holds the password, the client secret, the code, the PKCE
 * verifier or any token, in any column, in any common encoding; and the most verbose logging the
 * app offers does not print them either (RFC 6749 §10.3, §10.5; RFC 6819 §5.1.4.1.3).
 */
import { stripVTControlCharacters } from 'node:util';
import { jest } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { createApp } from '../../src/app.setup.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { Browser } from '../helpers/browser.js';
import { authorizeAsUser, authorizeUrl, basicAuth, newPkce, redirectParams } from '../helpers/oauth-flow.js';
import { createTestDatabase, dropTestDatabase } from '../helpers/test-database.js';

const PASSWORD = 'Tr0ub4dor & 3 plaintext-canary';
const WRONG_PASSWORD = 'wrong-password canary 7f3a';
const REDIRECT_URI = 'http://localhost:8080/callback';

function sha256(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** The ways a secret could end up stored or printed: as is, without its prefix, hex, base64, URL-encoded. */
function encodings(secret: string): string[] {
  const random = secret.replace(/^lk_[a-z]{2}_/, '');
  const forms = [secret, random, Buffer.from(secret).toString('hex'), Buffer.from(secret).toString('base64'), Buffer.from(secret).toString('base64url'), encodeURIComponent(secret)];
  return [...new Set(forms)];
}

/** The secrets of `text`, by name, that occur in it in any of their encodings. */
function leaked(text: string, secrets: Record<string, string>): string[] {
  return Object.entries(secrets)
    .filter(([, secret]) => encodings(secret).some((form) => text.includes(form)))
    .map(([name]) => name);
}

/** Everything the process prints, from before start-up: TypeORM writes through console, the rest to process.stdout/stderr or pino's destination. */
class OutputCapture {
  readonly chunks: string[] = [];
  private readonly spies: { mockRestore(): void }[] = [];

  start(): void {
    const record = (chunk: unknown): void => {
      this.chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
    };
    for (const stream of [process.stdout, process.stderr]) {
      this.spies.push(
        jest.spyOn(stream, 'write').mockImplementation(((chunk: unknown) => {
          record(chunk);
          return true;
        }) as typeof stream.write),
      );
    }
    for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) {
      this.spies.push(jest.spyOn(console, method).mockImplementation((...args: unknown[]) => record(args.map(String).join(' '))));
    }
  }

  stop(): void {
    for (const spy of this.spies.splice(0)) spy.mockRestore();
  }

  /** What was written, without terminal colour codes (TypeORM colours SQL when it thinks it may). */
  get text(): string {
    return stripVTControlCharacters(this.chunks.join(''));
  }
}

describe('secrets at rest and in logs', () => {
  const output = new OutputCapture();
  let nest: NestFastifyApplication;
  let baseUrl: string;
  let dataSource: DataSource;
  const secrets: Record<string, string> = { password: PASSWORD, wrongPassword: WRONG_PASSWORD };
  let logTextBeforeFlow = '';

  async function token(params: Record<string, string>, authorization?: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await fetch(`${baseUrl}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(authorization ? { authorization } : {}) },
      body: new URLSearchParams(params).toString(),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  beforeAll(async () => {
    // The most verbose settings Latchkey has: every Nest log level and every SQL statement.
    process.env.LOG_LEVEL = 'debug';
    process.env.DATABASE_LOGGING = 'true';
    output.start();
    await createTestDatabase();
    // pino writes to its own destination, not through process.stdout.write: collect its lines too.
    nest = await createApp({ destination: { write: (line: string) => void output.chunks.push(line) } });
    await nest.listen(0, '127.0.0.1');
    await nest.getHttpAdapter().getInstance().ready();
    baseUrl = `http://127.0.0.1:${(nest.getHttpServer().address() as { port: number }).port}`;
    dataSource = nest.get<DataSource>(getDataSourceToken());
    logTextBeforeFlow = output.text;

    // A user and a confidential client, through the same services the CLI uses.
    const username = 'secret_keeper';
    await nest.get(UsersService).create(username, PASSWORD);
    const { client, secret } = await nest.get(ClientsService).create({ name: 'Secrets test', redirectUris: [REDIRECT_URI], scope: 'notes:read notes:write' });
    secrets.clientSecret = secret!;
    const basic = basicAuth(client.id, secret!);
    const registered = { clientId: client.id, clientSecret: secret, redirectUri: REDIRECT_URI };

    // A failed login, then the real one, consent and the code.
    const browser = new Browser(baseUrl);
    const pkce = newPkce();
    secrets.codeVerifier = pkce.verifier;
    const url = authorizeUrl(registered, { scope: 'notes:read notes:write', state: 'st', code_challenge: pkce.challenge, code_challenge_method: 'S256' });
    const loginPage = await browser.get(url);
    const failed = await browser.submit(loginPage, '/login', { username, password: WRONG_PASSWORD });
    expect(failed.status).toBe(401);
    expect(leaked(failed.body, secrets)).toEqual([]);
    const page = await authorizeAsUser(browser, { username, password: PASSWORD }, url);
    const code = redirectParams(page).get('code')!;
    secrets.code = code;

    // Redeem it, refresh, use the token; then replay the code and reuse the rotated refresh token.
    const issued = await token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: pkce.verifier }, basic);
    expect(issued.status).toBe(200);
    secrets.accessToken = String(issued.body.access_token);
    secrets.refreshToken = String(issued.body.refresh_token);
    // The secret in the body too (a client_secret_basic client is refused that way, but the secret still travelled).
    expect((await token({ grant_type: 'refresh_token', refresh_token: secrets.refreshToken, client_id: client.id, client_secret: secret! })).body.error).toBe('invalid_client');
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: secrets.refreshToken }, basic);
    expect(refreshed.status).toBe(200);
    secrets.refreshedAccessToken = String(refreshed.body.access_token);
    secrets.refreshedRefreshToken = String(refreshed.body.refresh_token);
    const api = await fetch(`${baseUrl}/api/v1/notes`, { headers: { authorization: `Bearer ${secrets.refreshedAccessToken}` } });
    expect(api.status).toBe(200);

    expect((await token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: pkce.verifier }, basic)).body.error).toBe('invalid_grant');
    expect((await token({ grant_type: 'refresh_token', refresh_token: secrets.refreshToken }, basic)).body.error).toBe('invalid_grant');
    expect((await token({ grant_type: 'authorization_code', code, code_verifier: pkce.verifier }, basicAuth(client.id, `${secret!}x`))).body.error).toBe('invalid_client');
    const revoked = await fetch(`${baseUrl}/api/v1/notes`, { headers: { authorization: `Bearer ${secrets.refreshedAccessToken}` } });
    expect(revoked.status).toBe(401);
  });

  afterAll(async () => {
    await nest?.close();
    output.stop();
    await dropTestDatabase();
  });

  describe('the database', () => {
    let tables: Record<string, Record<string, unknown>[]>;

    beforeAll(async () => {
      const names =
        dataSource.driver.options.type === 'postgres'
          ? (await dataSource.query<{ name: string }[]>(`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)).map((r) => r.name)
          : (await dataSource.query<{ name: string }[]>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)).map((r) => r.name);
      tables = {};
      for (const name of names) tables[name] = await dataSource.query(`SELECT * FROM "${name}"`);
    });

    it('has every table of the flow, with rows in it', () => {
      for (const name of ['users', 'clients', 'authorization_codes', 'tokens', 'consents']) {
        expect({ name, rows: (tables[name] ?? []).length > 0 }).toEqual({ name, rows: true });
      }
    });

    it('holds none of the secrets in any column of any table', () => {
      const found = Object.entries(tables).flatMap(([name, rows]) =>
        rows.flatMap((row) => Object.entries(row).flatMap(([column, value]) => leaked(value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value), secrets).map((secret) => `${name}.${column}: ${secret}`))),
      );
      expect(found).toEqual([]);
    });

    it('stores the password as an argon2id PHC string, salted', async () => {
      const [user] = tables.users as { username: string; password_hash: string }[];
      expect(user.password_hash).toMatch(/^\$argon2id\$v=19\$m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/);
      const twin = await nest.get(UsersService).create('same_password_twin', PASSWORD);
      expect(twin.passwordHash).toMatch(/^\$argon2id\$/);
      expect(twin.passwordHash).not.toBe(user.password_hash);
    });

    it('stores the client secret, the code and the tokens as SHA-256 digests only', () => {
      const clientRow = (tables.clients as { secret_hash: string }[])[0];
      expect(clientRow.secret_hash).toBe(sha256(secrets.clientSecret));
      expect((tables.authorization_codes as { code_hash: string }[]).map((r) => r.code_hash)).toEqual([sha256(secrets.code)]);
      const tokenHashes = (tables.tokens as { token_hash: string }[]).map((r) => r.token_hash).sort();
      expect(tokenHashes).toEqual([secrets.accessToken, secrets.refreshToken, secrets.refreshedAccessToken, secrets.refreshedRefreshToken].map(sha256).sort());
    });
  });

  describe('the logs at LOG_LEVEL=debug with DATABASE_LOGGING=true', () => {
    it('are captured (start-up messages, debug messages, SQL statements and request lines all arrived)', () => {
      expect(logTextBeforeFlow).toMatch(/Nest application successfully started/);
      expect(logTextBeforeFlow).toMatch(/attribute index\(es\) ensured/);
      expect(output.text).toMatch(/SELECT .*"tokens"/);
      expect(output.text).toMatch(/"url":"\/token".*"msg":"request completed"/);
    });

    it('print none of the secrets', () => {
      expect(leaked(output.text, secrets)).toEqual([]);
    });
  });
});
