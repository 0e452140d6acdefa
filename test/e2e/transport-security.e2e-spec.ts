/**
 * HTTPS as the spec demands (issue #5): RFC 6749 §3.1/§3.2/§10.9 and RFC 6750 §5.3 require TLS for
 * every request that carries credentials. In production a plain-http request is refused unless it
 * came over our own TLS listener or through a load balancer named in TRUST_PROXY that says
 * X-Forwarded-Proto: https; health probes are the exception; HSTS goes on https responses only.
 */
import { request as httpsRequest } from 'node:https';
import { createApp } from '../../src/app.setup.js';
import { makeSelfSignedCertificate } from '../helpers/self-signed.js';
import { TestApp } from '../helpers/test-app.js';
import { createTestDatabase, dropTestDatabase } from '../helpers/test-database.js';

const PRODUCTION = {
  NODE_ENV: 'production',
  ISSUER: 'https://auth.example.test',
  SESSION_SECRET: 'a-session-secret-of-at-least-32-characters',
  TOKEN_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
  SIGNING_KEY_ENCRYPTION_KEY: Buffer.alloc(32, 2).toString('base64'),
  FACTOR_ENCRYPTION_KEY: Buffer.alloc(32, 3).toString('base64'),
  // The suite also runs on SQLite; everything else about this configuration is production's.
  ALLOW_UNSAFE: 'sqlite',
};
const DEPLOYMENT_VARIABLES = ['NODE_ENV', 'ISSUER', 'SESSION_SECRET', 'TOKEN_ENCRYPTION_KEY', 'SIGNING_KEY_ENCRYPTION_KEY', 'FACTOR_ENCRYPTION_KEY', 'ALLOW_UNSAFE', 'TRUST_PROXY', 'TLS_CERT_FILE', 'TLS_KEY_FILE'];

/** Sets exactly `env` among the deployment variables (the others unset), then starts the app. */
function startWith(env: Record<string, string>): Promise<TestApp> {
  for (const name of DEPLOYMENT_VARIABLES) delete process.env[name];
  return TestApp.start(env);
}
const HSTS = 'max-age=31536000; includeSubDomains';

function tokenRequest(app: TestApp, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(app.url('/token'), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from('someone:secret').toString('base64')}`, ...headers },
    body: 'grant_type=client_credentials',
  });
}

interface HttpsResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** GET over TLS, trusting only `ca` (fetch on Node 20 takes no per-request CA). */
function httpsGet(url: string, ca: string): Promise<HttpsResult> {
  return new Promise((resolve, reject) => {
    const request = httpsRequest(url, { ca }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    request.on('error', reject).end();
  });
}

describe('transport security', () => {
  describe('in production, behind a trusted load balancer (TRUST_PROXY=127.0.0.1)', () => {
    let app: TestApp;
    beforeAll(async () => {
      app = await startWith({ ...PRODUCTION, TRUST_PROXY: '127.0.0.1' });
    });
    afterAll(() => app.stop());

    it('refuses a plain-http token request with 400 https_required, before looking at the credentials', async () => {
      const response = await tokenRequest(app);
      expect(response.status).toBe(400);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('strict-transport-security')).toBeNull();
      expect(await response.json()).toEqual({ error: 'https_required', error_description: 'This server only accepts requests over HTTPS' });
    });

    it.each(['/authorize?response_type=code', '/.well-known/oauth-authorization-server', '/api/v1/notes', '/login'])('refuses plain-http GET %s', async (path) => {
      const response = await fetch(app.url(path));
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toBe('https_required');
    });

    it.each(['/health/live', '/health/ready'])('answers the probe %s over plain http', async (path) => {
      const response = await fetch(app.url(path));
      expect(response.status).toBe(200);
    });

    it('serves a request the load balancer received over https, with HSTS', async () => {
      const response = await fetch(app.url('/.well-known/oauth-authorization-server'), { headers: { 'x-forwarded-proto': 'https' } });
      expect(response.status).toBe(200);
      expect(response.headers.get('strict-transport-security')).toBe(HSTS);
      expect(((await response.json()) as { issuer: string }).issuer).toBe('https://auth.example.test');
    });

    it('authenticates the client once the request came over https', async () => {
      const response = await tokenRequest(app, { 'x-forwarded-proto': 'https' });
      expect(response.status).toBe(401);
      expect(((await response.json()) as { error: string }).error).toBe('invalid_client');
      expect(response.headers.get('strict-transport-security')).toBe(HSTS);
    });

    it('marks the session cookie Secure', async () => {
      const response = await fetch(app.url('/login'), { headers: { 'x-forwarded-proto': 'https' } });
      expect(response.status).toBe(200);
      expect(response.headers.get('set-cookie')).toMatch(/;\s*Secure/i);
    });
  });

  describe('in production, X-Forwarded-Proto from an address that is not a trusted proxy', () => {
    let app: TestApp;
    beforeAll(async () => {
      app = await startWith({ ...PRODUCTION, TRUST_PROXY: '10.20.30.40' });
    });
    afterAll(() => app.stop());

    it('is not believed: the request is still plain http', async () => {
      const response = await fetch(app.url('/.well-known/oauth-authorization-server'), { headers: { 'x-forwarded-proto': 'https' } });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toBe('https_required');
    });
  });

  describe('in production, serving TLS itself (TLS_CERT_FILE, TLS_KEY_FILE)', () => {
    const tls = makeSelfSignedCertificate();
    let app: TestApp;
    let httpsBase: string;
    beforeAll(async () => {
      app = await startWith({ ...PRODUCTION, TLS_CERT_FILE: tls.certFile, TLS_KEY_FILE: tls.keyFile });
      httpsBase = app.baseUrl.replace('http://', 'https://');
    });
    afterAll(() => app.stop());

    it('answers over https, with HSTS', async () => {
      const response = await httpsGet(`${httpsBase}/.well-known/oauth-authorization-server`, tls.cert);
      expect(response.status).toBe(200);
      expect(response.headers['strict-transport-security']).toBe(HSTS);
      expect(JSON.parse(response.body)).toMatchObject({ issuer: 'https://auth.example.test' });
    });

    it('speaks no plain http on that port', async () => {
      await expect(fetch(app.url('/health/live'))).rejects.toThrow();
    });
  });

  describe('outside production', () => {
    let app: TestApp;
    beforeAll(async () => {
      app = await startWith({ NODE_ENV: 'test' });
    });
    afterAll(() => app.stop());

    it('serves plain http, without HSTS', async () => {
      const response = await fetch(app.url('/.well-known/oauth-authorization-server'));
      expect(response.status).toBe(200);
      expect(response.headers.get('strict-transport-security')).toBeNull();
    });
  });

  describe('start-up in production', () => {
    const saved = { ...process.env };
    afterEach(async () => {
      process.env = { ...saved };
      await dropTestDatabase();
    });

    it('refuses an http ISSUER, naming the variable and the way out', async () => {
      for (const name of DEPLOYMENT_VARIABLES) delete process.env[name];
      Object.assign(process.env, { ...PRODUCTION, ISSUER: 'http://auth.example.test' });
      await createTestDatabase();
      await expect(createApp({ level: 'silent' })).rejects.toThrow(/ISSUER: must be an https URL in production, got "http:\/\/auth\.example\.test" \(or ALLOW_UNSAFE=http\)/);
    });

    it('refuses a generated session key, and SQLite unless allowed', async () => {
      for (const name of DEPLOYMENT_VARIABLES) delete process.env[name];
      Object.assign(process.env, { NODE_ENV: 'production', ISSUER: 'https://auth.example.test' });
      await createTestDatabase();
      const failure = createApp({ level: 'silent' });
      await expect(failure).rejects.toThrow(/SESSION_SECRET: set at least 32 random characters/);
      if (!process.env.TEST_DATABASE_URL) await expect(failure).rejects.toThrow(/DATABASE_URL: SQLite is a single file/);
    });
  });
});
