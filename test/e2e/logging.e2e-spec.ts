/**
 * Structured logs (issue #5): one JSON line per request through pino, carrying a request id that
 * honours the caller's X-Request-Id; no header and no secret ever reaches a line.
 */
import { TestApp } from '../helpers/test-app.js';

interface LogLine {
  level: number;
  msg: string;
  context?: string;
  req?: { id: string; method: string; url: string };
  res?: { statusCode: number };
  responseTime?: number;
}

/** A pino destination that keeps every line, parsed. */
class LogCollector {
  readonly raw: string[] = [];
  write(chunk: string): void {
    this.raw.push(chunk);
  }
  get lines(): LogLine[] {
    return this.raw.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line) as LogLine);
  }
  requestLines(id?: string): LogLine[] {
    return this.lines.filter((line) => line.req && (id === undefined || line.req.id === id));
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('request logging', () => {
  const logs = new LogCollector();
  let app: TestApp;
  beforeAll(async () => {
    app = await TestApp.start({}, { level: 'info', destination: logs });
  });
  afterAll(() => app.stop());

  /** pino-http writes the line when the response finishes; give it that moment. */
  async function settled(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }

  it('writes every line as JSON, the Nest start-up messages included', () => {
    expect(logs.raw.length).toBeGreaterThan(0);
    expect(logs.lines.some((line) => line.context === 'NestApplication')).toBe(true);
  });

  it("uses the caller's X-Request-Id, echoes it, and logs one line for the request", async () => {
    const response = await fetch(app.url('/.well-known/oauth-authorization-server'), { headers: { 'x-request-id': 'lb-7f3a:42' } });
    expect(response.headers.get('x-request-id')).toBe('lb-7f3a:42');
    await settled();
    const lines = logs.requestLines('lb-7f3a:42');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 30, msg: 'request completed', req: { method: 'GET', url: '/.well-known/oauth-authorization-server', remoteAddress: '127.0.0.1' }, res: { statusCode: 200 } });
    expect(Object.keys(lines[0].req!).sort()).toEqual(['id', 'method', 'remoteAddress', 'url']);
    expect(typeof lines[0].responseTime).toBe('number');
  });

  it.each([
    ['a space', 'two words'],
    ['too long', 'x'.repeat(129)],
    ['a header-splitting attempt', 'a\tb'],
  ])('replaces an X-Request-Id with %s by a fresh UUID', async (_case, value) => {
    const response = await fetch(app.url('/health/live'), { headers: { 'x-request-id': value } });
    expect(response.headers.get('x-request-id')).toMatch(UUID);
  });

  it('gives each request without one its own id', async () => {
    const [a, b] = await Promise.all([fetch(app.url('/health/live')), fetch(app.url('/health/live'))]);
    expect(a.headers.get('x-request-id')).toMatch(UUID);
    expect(b.headers.get('x-request-id')).toMatch(UUID);
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
  });

  it('does not log the health probes', async () => {
    const response = await fetch(app.url('/health/ready'), { headers: { 'x-request-id': 'probe-1' } });
    expect(response.status).toBe(200);
    await settled();
    expect(logs.requestLines('probe-1')).toEqual([]);
  });

  it('logs neither the Authorization header nor a token a client put in the URL', async () => {
    const secret = 'lk_at_canaryCANARYcanary0123456789';
    const response = await fetch(app.url(`/api/v1/notes?limit=5&access_token=${secret}`), { headers: { 'x-request-id': 'leaky-1', authorization: `Bearer ${secret}` } });
    expect(response.status).toBe(400);
    await settled();
    const [line] = logs.requestLines('leaky-1');
    expect(line.req?.url).toBe('/api/v1/notes?limit=5&access_token=[redacted]');
    expect(line.res?.statusCode).toBe(400);
    expect(logs.raw.join('')).not.toContain(secret);
    expect(logs.raw.join('')).not.toContain('canaryCANARY');
  });

  it('logs a form post without its body', async () => {
    const response = await fetch(app.url('/token'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-request-id': 'form-1' },
      body: 'grant_type=client_credentials&client_id=nobody&client_secret=hunter2-canary',
    });
    expect(response.status).toBe(401);
    await settled();
    expect(logs.requestLines('form-1')).toHaveLength(1);
    expect(logs.raw.join('')).not.toContain('hunter2-canary');
  });
});
