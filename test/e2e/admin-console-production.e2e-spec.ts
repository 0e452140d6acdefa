/**
 * Issue 48: the admin console in production, behind a trusted load balancer. Its own requests to
 * the server (discovery, the token endpoint, the admin API) are made in-process and pass the
 * https-only rule that refuses plain http from the network; its cookie is Secure; its sign-in goes
 * to the https issuer.
 */
import { ConsoleOpenId } from '../../src/admin-console/console-openid.js';
import { InProcessHttp } from '../../src/admin-console/in-process-http.js';
import { TestApp } from '../helpers/test-app.js';

const PRODUCTION = {
  NODE_ENV: 'production',
  ISSUER: 'https://auth.example.test',
  SESSION_SECRET: 'a-session-secret-of-at-least-32-characters',
  TOKEN_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
  SIGNING_KEY_ENCRYPTION_KEY: Buffer.alloc(32, 2).toString('base64'),
  FACTOR_ENCRYPTION_KEY: Buffer.alloc(32, 3).toString('base64'),
  // The suite also runs on SQLite; everything else about this configuration is production's.
  ALLOW_UNSAFE: 'sqlite',
  TRUST_PROXY: '127.0.0.1',
};

describe('the admin console in production (https only, behind a load balancer)', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await TestApp.start(PRODUCTION);
  });
  afterAll(async () => {
    await app?.stop();
    for (const name of Object.keys(PRODUCTION)) delete process.env[name];
  });

  it('refuses plain http from the network, but serves the console\'s in-process requests', async () => {
    expect((await fetch(app.url('/admin/api/v1/me'))).status).toBe(400);
    const inProcess = await app.app.get(InProcessHttp).send({ method: 'GET', path: '/admin/api/v1/me', remoteAddress: '203.0.113.7' });
    expect(inProcess.status).toBe(401);
  });

  it('registers its client and builds its sign-in against the https issuer, in-process', async () => {
    const { location, pending } = await app.app.get(ConsoleOpenId).start('203.0.113.7', '/admin', false);
    const url = new URL(location);
    expect(`${url.origin}${url.pathname}`).toBe('https://auth.example.test/authorize');
    expect(url.searchParams.get('redirect_uri')).toBe('https://auth.example.test/admin/callback');
    expect(url.searchParams.get('state')).toBe(pending.state);
  });

  it('sets a Secure console cookie on a request the load balancer says came over https', async () => {
    const response = await fetch(app.url('/admin/sign-in'), { redirect: 'manual', headers: { 'x-forwarded-proto': 'https', host: 'auth.example.test' } });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toMatch(/^https:\/\/auth\.example\.test\/authorize\?/);
    const cookie = response.headers.getSetCookie().find((line) => line.startsWith('latchkey_admin='));
    expect(cookie).toMatch(/; Secure/);
    expect(cookie).toMatch(/; HttpOnly/);
  });
});

describe('ADMIN_CONSOLE_ENABLED=false', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await TestApp.start({ ADMIN_CONSOLE_ENABLED: 'false' });
  });
  afterAll(async () => {
    await app?.stop();
    delete process.env.ADMIN_CONSOLE_ENABLED;
  });

  it('answers 404 on every console page and sets no cookie; the admin API stays', async () => {
    for (const path of ['/admin', '/admin/sign-in', '/admin/people', '/admin/assets/console.css']) {
      const response = await fetch(app.url(path), { redirect: 'manual' });
      expect([path, response.status, response.headers.getSetCookie().length]).toEqual([path, 404, 0]);
    }
    expect((await fetch(app.url('/admin/sign-out'), { method: 'POST' })).status).toBe(404);
    expect((await fetch(app.url('/admin/api/v1/me'))).status).toBe(401);
  });
});
