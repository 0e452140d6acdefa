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

    await app.dataSource.initialize();
    expect(await get('/health/ready')).toMatchObject({ status: 200, body: { status: 'ok' } });
  });
});
