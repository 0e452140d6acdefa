/**
 * An unreachable Redis (REDIS_URL naming a port where nothing listens): the instance reports
 * itself unready, but requests are still served, each instance counting its rate limits alone.
 * Needs no Redis server, so it runs everywhere; the shared limits themselves are in
 * rate-limits-redis.e2e-spec.ts.
 */
import { randomBytes } from 'node:crypto';
import { clientCredentialsStatus } from '../helpers/oauth-flow.js';
import { TestApp } from '../helpers/test-app.js';

const PREFIX = `latchkey_test_${randomBytes(4).toString('hex')}:`;


describe('an unreachable Redis', () => {
  let app: TestApp;

  beforeAll(async () => {
    // Nothing listens on port 1: every connection attempt is refused.
    app = await TestApp.start({ REDIS_URL: 'redis://127.0.0.1:1', RATE_LIMIT_KEY_PREFIX: PREFIX, RATE_LIMIT_CLIENT_PER_MINUTE: '2' });
  });
  afterAll(async () => app?.stop());

  it('makes the instance unready, but requests are still served and limited by this instance alone', async () => {
    const ready = await fetch(app.url('/health/ready'));
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ error: 'temporarily_unavailable', details: { database: { status: 'up' }, redis: { status: 'down' } } });

    const client = await app.createClient({ grantTypes: ['client_credentials'], scope: 'notes:read' });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push(await clientCredentialsStatus(app.baseUrl, client));
    expect(statuses).toEqual([200, 200, 429]);
  });
});
