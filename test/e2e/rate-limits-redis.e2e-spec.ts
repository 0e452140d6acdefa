/**
 * Rate limits shared through Redis (REDIS_URL): two instances on one database and one Redis, as
 * behind a load balancer, enforce one limit together.
 * Needs a Redis server named by TEST_REDIS_URL (e.g. redis://127.0.0.1:6379), the same convention
 * as TEST_DATABASE_URL: `npm test` runs this file only when it is set (.ci/run sets it). Run alone
 * without it, the file fails with that message instead of guessing an address.
 * What happens when Redis is unreachable is in rate-limits-redis-unreachable.e2e-spec.ts, which
 * needs no Redis.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { MemoryLoginAttemptStore } from '../../src/rate-limit/login-attempts.store.js';
import { RedisLoginAttemptStore } from '../../src/rate-limit/redis-login-attempts.store.js';
import { openVerificationPage, submitUserCode } from '../helpers/device.js';
import { Browser, hiddenFields } from '../helpers/browser.js';
import { clientCredentialsStatus } from '../helpers/oauth-flow.js';
import { TestApp } from '../helpers/test-app.js';
import { startAnotherInstance } from '../helpers/app-at-issuer.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? '';
if (!REDIS_URL) {
  throw new Error('rate-limits-redis needs a Redis server: set TEST_REDIS_URL, e.g. TEST_REDIS_URL=redis://127.0.0.1:6379');
}
const PREFIX = `latchkey_test_${randomBytes(4).toString('hex')}:`;


async function signIn(baseUrl: string, username: string, password: string): Promise<{ status: number; retryAfter: string | null }> {
  const browser = new Browser(baseUrl);
  const form = await browser.get('/login');
  const page = await browser.post('/login', { ...hiddenFields(form.body, '/login'), username, password });
  return { status: page.status, retryAfter: page.headers.get('retry-after') };
}

describe('rate limits shared through Redis by two instances', () => {
  let first: TestApp;
  let second: { nest: NestFastifyApplication; baseUrl: string };
  const redis = new Redis(REDIS_URL, { lazyConnect: true });

  beforeAll(async () => {
    await redis.connect();
    first = await TestApp.start({
      REDIS_URL,
      RATE_LIMIT_KEY_PREFIX: PREFIX,
      RATE_LIMIT_CLIENT_PER_MINUTE: '4',
      LOGIN_FREE_FAILURES: '2',
    });
    second = await startAnotherInstance();
  });
  afterAll(async () => {
    await second?.nest.close();
    await first?.stop();
    const keys = await redis.keys(`${PREFIX}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('reports Redis in readiness, once its connection is up', async () => {
    // The Redis connection opens in the background after start-up (src/redis/redis-client.factory.ts),
    // so a loaded machine may answer 503 at first: poll as a load balancer would.
    let ready = await fetch(first.url('/health/ready'));
    for (let attempt = 0; ready.status !== 200 && attempt < 50; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      ready = await fetch(first.url('/health/ready'));
    }
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ info: { database: { status: 'up' }, redis: { status: 'up' } } });
  });

  it('counts a client\'s requests to either instance against one limit, and keeps the counters in Redis under hashed keys', async () => {
    const client = await first.createClient({ grantTypes: ['client_credentials'], scope: 'notes:read' });
    const statuses = [];
    for (let i = 0; i < 3; i++) {
      statuses.push(await clientCredentialsStatus(first.baseUrl, client));
      statuses.push(await clientCredentialsStatus(second.baseUrl, client));
    }
    // Four allowed in all, not four per instance.
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);

    const keys = await redis.keys(`${PREFIX}*`);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) expect(key).not.toContain(client.clientId);
  });

  it('does not make a right sign-in wait when instances\' clocks differ by a millisecond (below the free failures there is no lock)', async () => {
    const redis = new Redis(REDIS_URL);
    const store = new RedisLoginAttemptStore(redis, `${PREFIX}skew:`);
    const memory = new MemoryLoginAttemptStore();
    const counters = [{ key: 'address:username', freeFailures: 5 }];
    const policy = { maxDelayMs: 900_000, windowMs: 900_000 };
    const now = Date.now();
    try {
      for (const each of [store, memory]) {
        expect(await each.begin(counters, policy, now)).toBe(0);
        // Another instance, its clock one millisecond behind, begins an attempt right after.
        expect(await each.begin(counters, policy, now - 1)).toBe(0);
      }
      // Past the free failures the wait still applies, across the same skew.
      for (let i = 0; i < 3; i++) await store.begin(counters, policy, now);
      expect(await store.begin(counters, policy, now - 1)).toBeGreaterThan(0);
    } finally {
      await memory.onApplicationShutdown();
      await store.onApplicationShutdown();
      redis.disconnect();
    }
  });

  it('makes a sign-in wait on one instance after failures on the other', async () => {
    const user = await first.createUser();
    expect((await signIn(first.baseUrl, user.username, 'wrong 1')).status).toBe(401);
    expect((await signIn(second.baseUrl, user.username, 'wrong 2')).status).toBe(401);
    expect(await signIn(first.baseUrl, user.username, user.password)).toEqual({ status: 429, retryAfter: '1' });
    expect(await signIn(second.baseUrl, user.username, user.password)).toEqual({ status: 429, retryAfter: '1' });
  });

  it('makes a person typing device user codes wait on one instance after wrong codes on the other (RFC 8628 §5.1)', async () => {
    const user = await first.createUser();
    const browser = new Browser(first.baseUrl);
    const entry = await openVerificationPage(browser, user);
    const there = browser.copy(second.baseUrl);
    expect((await submitUserCode(browser, entry, 'BCDF-GHJK')).status).toBe(400);
    expect((await submitUserCode(there, entry, 'BCDF-GHJK')).status).toBe(400);
    expect((await submitUserCode(browser, entry, 'BCDF-GHJK')).status).toBe(429);
    expect((await submitUserCode(there, entry, 'BCDF-GHJK')).status).toBe(429);
  });
});
