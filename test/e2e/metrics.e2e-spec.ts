/**
 * Prometheus metrics on their own listener: counters of the token endpoint and of authorization
 * codes, request latency by route pattern, and the row caches kept on PostgreSQL (issue 47), none
 * of it reachable on the public port.
 */
import { MetricsService } from '../../src/metrics/metrics.service.js';
import { ApiClient, obtainTokens } from '../helpers/api-client.js';
import { freePort } from '../helpers/free-port.js';
import { obtainCode, tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';
import { within } from '../helpers/within.js';
import { withEnv } from '../helpers/with-env.js';

/** Prometheus text format: `name{a="x",b="y"} value` → the value of the series with exactly these labels, 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.keys(found).length === Object.keys(labels).length && Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[3]);
  }
  return 0;
}

describe('Prometheus metrics (/metrics on the metrics listener)', () => {
  let app: TestApp;
  let client: RegisteredClient;
  let user: TestUser;

  beforeAll(async () => {
    app = await TestApp.start({ METRICS_HOST: '127.0.0.1' });
    client = await app.createClient();
    user = await app.createUser();
  });
  afterAll(async () => app?.stop());

  function metricsUrl(): string {
    const address = app.app.get(MetricsService).metricsAddress;
    if (!address) throw new Error('The metrics listener is not listening');
    return `http://127.0.0.1:${address.port}/metrics`;
  }

  async function scrape(): Promise<string> {
    const response = await fetch(metricsUrl());
    expect(response.status).toBe(200);
    return response.text();
  }

  it('serves the text exposition format on its own port, with help texts and process metrics', async () => {
    const response = await fetch(metricsUrl());
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await response.text();
    expect(text).toContain('# HELP latchkey_http_request_duration_seconds ');
    expect(text).toContain('# TYPE latchkey_http_request_duration_seconds histogram');
    expect(text).toContain('# TYPE latchkey_tokens_issued_total counter');
    expect(text).toContain('# TYPE latchkey_token_requests_refused_total counter');
    expect(sample(text, 'latchkey_authorization_codes_redeemed_total')).toBeGreaterThanOrEqual(0);
    expect(text).toMatch(/^# TYPE latchkey_authorization_codes_replayed_total counter$/m);
    expect(sample(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(app.app.get(MetricsService).metricsAddress?.port).not.toBe(new URL(app.baseUrl).port);
  });

  it('answers only /metrics there', async () => {
    const url = new URL(metricsUrl());
    expect((await fetch(new URL('/', url))).status).toBe(404);
    expect((await fetch(new URL('/health/live', url))).status).toBe(404);
    expect((await fetch(url, { method: 'POST' })).status).toBe(405);
  });

  it('is not served on the public port', async () => {
    const response = await fetch(app.url('/metrics'));
    expect(response.status).toBe(404);
    expect(await response.text()).not.toContain('latchkey_');
  });

  it('counts issued tokens, redeemed codes, replayed codes and refused requests by grant type and error', async () => {
    const before = await scrape();
    const { code, pkce } = await obtainCode(app, client, user);
    const params = { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier };
    expect((await tokenRequest(app, client, params)).status).toBe(200);
    // RFC 6749 §4.1.2: the same code again is a replay, refused with invalid_grant.
    expect((await tokenRequest(app, client, params)).body.error).toBe('invalid_grant');
    // A code that never existed: refused, but not a replay.
    expect((await tokenRequest(app, client, { ...params, code: 'lk_ac_unknown' })).body.error).toBe('invalid_grant');
    // A grant type nobody implements: counted, without echoing the client's value into a label.
    expect((await tokenRequest(app, client, { grant_type: 'urn:example:made-up' })).body.error).toBe('unsupported_grant_type');
    const after = await scrape();

    const delta = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);
    expect(delta('latchkey_tokens_issued_total', { grant_type: 'authorization_code' })).toBe(1);
    expect(delta('latchkey_authorization_codes_redeemed_total')).toBe(1);
    expect(delta('latchkey_authorization_codes_replayed_total')).toBe(1);
    expect(delta('latchkey_token_requests_refused_total', { grant_type: 'authorization_code', error: 'invalid_grant' })).toBe(2);
    expect(delta('latchkey_token_requests_refused_total', { grant_type: 'unsupported', error: 'unsupported_grant_type' })).toBe(1);
    expect(after).not.toContain('made-up');
  });

  it('counts refresh_token grants under their own grant type', async () => {
    const before = await scrape();
    const tokens = await obtainTokens(app, client, user, 'notes:read');
    expect((await tokenRequest(app, client, { grant_type: 'refresh_token', refresh_token: tokens.refreshToken! })).status).toBe(200);
    expect((await tokenRequest(app, client, { grant_type: 'refresh_token', refresh_token: tokens.refreshToken! })).body.error).toBe('invalid_grant');
    const after = await scrape();
    expect(sample(after, 'latchkey_tokens_issued_total', { grant_type: 'refresh_token' }) - sample(before, 'latchkey_tokens_issued_total', { grant_type: 'refresh_token' })).toBe(1);
    const refused = { grant_type: 'refresh_token', error: 'invalid_grant' };
    expect(sample(after, 'latchkey_token_requests_refused_total', refused) - sample(before, 'latchkey_token_requests_refused_total', refused)).toBe(1);
  });

  it('times requests by route pattern and status code, never by raw URL', async () => {
    const api = new ApiClient(app, (await obtainTokens(app, client, user, 'notes:read notes:write')).accessToken);
    const created = await api.post('/api/v1/notes', { title: 'metrics' });
    expect(created.status).toBe(201);
    const id = (created.json as { id: string }).id;
    expect((await api.get(`/api/v1/notes/${id}`)).status).toBe(200);
    expect((await fetch(app.url('/no/such/place-4f1c'))).status).toBe(404);

    const text = await scrape();
    const count = (labels: Record<string, string>) => sample(text, 'latchkey_http_request_duration_seconds_count', labels);
    expect(count({ method: 'POST', route: '/token', status_code: '200' })).toBeGreaterThanOrEqual(1);
    expect(count({ method: 'POST', route: '/api/v1/:collection', status_code: '201' })).toBe(1);
    expect(count({ method: 'GET', route: '/api/v1/:collection/:id', status_code: '200' })).toBe(1);
    expect(count({ method: 'GET', route: 'unmatched', status_code: '404' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'latchkey_http_request_duration_seconds_bucket', { method: 'GET', route: '/api/v1/:collection/:id', status_code: '200', le: '+Inf' })).toBe(1);
    expect(sample(text, 'latchkey_http_request_duration_seconds_sum', { method: 'POST', route: '/token', status_code: '200' })).toBeGreaterThan(0);
    expect(text).not.toContain(id);
    expect(text).not.toContain('place-4f1c');
  });

  it('counts the row caches: an access token read again is a hit on PostgreSQL; SQLite keeps nothing', async () => {
    const postgres = Boolean(process.env.TEST_DATABASE_URL);
    const tokens = { cache: 'tokens' };
    const before = await scrape();
    const api = new ApiClient(app, (await obtainTokens(app, client, user, 'notes:read')).accessToken);
    expect((await api.get('/api/v1/notes')).status).toBe(200);
    expect((await api.get('/api/v1/notes')).status).toBe(200);
    const hits = async (): Promise<number> => sample(await scrape(), 'latchkey_row_cache_hits_total', tokens) - sample(before, 'latchkey_row_cache_hits_total', tokens);
    if (postgres) {
      // The token's INSERT notifies too, and that notification may arrive after the first read kept
      // the row, dropping it once (a read more, never a stale row): read again until one is a hit.
      const hit = await within(2_000, async () => {
        if ((await hits()) >= 1) return true;
        expect((await api.get('/api/v1/notes')).status).toBe(200);
        return false;
      });
      expect(hit).toBe(true);
    } else {
      expect(await hits()).toBe(0);
    }
    const after = await scrape();
    const delta = (name: string) => sample(after, name, tokens) - sample(before, name, tokens);
    // The first read of the new token reads the database; with the cache off (SQLite) nothing is counted.
    if (postgres) expect(delta('latchkey_row_cache_misses_total')).toBeGreaterThanOrEqual(1);
    else expect(delta('latchkey_row_cache_misses_total')).toBe(0);
    expect(sample(after, 'latchkey_row_cache_budget_bytes', tokens)).toBe(postgres ? 64 * 1024 * 1024 : 0);
    expect(sample(after, 'latchkey_row_cache_budget_bytes', { cache: 'clients' })).toBe(postgres ? 16 * 1024 * 1024 : 0);
    expect(sample(after, 'latchkey_row_cache_entries', tokens) >= 1).toBe(postgres);
    expect(sample(after, 'latchkey_row_cache_bytes', tokens) > 0).toBe(postgres);
    expect(sample(after, 'latchkey_row_cache_bytes', tokens)).toBeLessThanOrEqual(sample(after, 'latchkey_row_cache_budget_bytes', tokens));
    for (const name of ['hits', 'misses', 'evictions', 'invalidations']) expect(after).toMatch(new RegExp(`^# TYPE latchkey_row_cache_${name}_total counter$`, 'm'));
    for (const name of ['bytes', 'entries', 'budget_bytes']) expect(after).toMatch(new RegExp(`^# TYPE latchkey_row_cache_${name} gauge$`, 'm'));
  });

  it('METRICS_ENABLED=false opens no listener', async () => {
    const port = await freePort();
    // A second instance on the same database: closed, never stop()ped, which would drop the database.
    const second = await withEnv({ METRICS_ENABLED: 'false', METRICS_PORT: String(port) }, () => TestApp.start());
    try {
      expect(second.app.get(MetricsService).metricsAddress).toBeUndefined();
      await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
      expect((await fetch(second.url('/metrics'))).status).toBe(404);
    } finally {
      await second.app.close();
    }
  });

  it('closes the listener when the application closes', async () => {
    const second = await TestApp.start();
    const { port } = second.app.get(MetricsService).metricsAddress!;
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
    await second.app.close();
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });
});
