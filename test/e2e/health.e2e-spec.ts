import { TestApp } from '../helpers/test-app.js';

/** Liveness and readiness probes (@nestjs/terminus) for the load balancer. */
describe('health probes', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await TestApp.start();
  });
  afterAll(async () => app?.stop());

  const get = async (path: string) => {
    const response = await fetch(app.url(path));
    return { status: response.status, cacheControl: response.headers.get('cache-control'), body: (await response.json()) as Record<string, unknown> };
  };

  it('/health/live answers while the process runs', async () => {
    expect(await get('/health/live')).toEqual({ status: 200, cacheControl: 'no-store', body: { status: 'ok' } });
  });

  it('/health/ready is green when the database answers, 503 with an error while it is gone, and green again once it is back', async () => {
    expect(await get('/health/ready')).toMatchObject({ status: 200, cacheControl: 'no-store', body: { status: 'ok', info: { database: { status: 'up' } } } });

    await app.dataSource.destroy();
    const down = await get('/health/ready');
    expect(down).toMatchObject({ status: 503, body: { error: 'temporarily_unavailable', error_description: expect.any(String), status: 'error' } });
    expect(down.body).toMatchObject({ details: { database: { status: 'down' } } });
    // Meanwhile, a request that needs the database is told to come back (503 + Retry-After), not a 500.
    const token = await fetch(app.url('/token'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${Buffer.from('someone:secret').toString('base64')}` },
      body: 'grant_type=client_credentials',
    });
    expect({ status: token.status, retryAfter: token.headers.get('retry-after'), body: await token.json() }).toEqual({
      status: 503,
      retryAfter: '5',
      body: { error: 'temporarily_unavailable', error_description: expect.any(String) },
    });
    const login = await fetch(app.url('/authorize?response_type=code&client_id=someone'));
    expect({ status: login.status, retryAfter: login.headers.get('retry-after') }).toEqual({ status: 503, retryAfter: '5' });
    expect(await login.text()).toContain('temporarily unavailable');

    await app.dataSource.initialize();
    expect(await get('/health/ready')).toMatchObject({ status: 200, body: { status: 'ok' } });
  });
});
