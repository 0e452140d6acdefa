/**
 * A server that cannot start says why in one JSON log line naming the setting to change, and
 * exits 1 (issue 15, item 5): a second instance on the same host used to die with a plain-text
 * `listen EADDRINUSE …:9464` from the metrics listener, and a setting that is not a number was
 * reported as "(got null)". The real built server runs as a child process, as `npm start` runs it.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { promisify } from 'node:util';
import { createTestDatabase, dropTestDatabase } from '../helpers/test-database.js';

const PROJECT = new URL('../../', import.meta.url).pathname;

interface Outcome {
  code: number | null;
  lines: Record<string, unknown>[];
  text: string;
}

/** Runs the server until it exits (it is expected to fail at start-up); every output line must be JSON. */
async function start(env: Record<string, string>): Promise<Outcome> {
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    cwd: PROJECT,
    env: { ...process.env, HOST: '127.0.0.1', METRICS_HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  const lines = text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { code, lines, text };
}

async function occupy(): Promise<{ server: Server; port: number }> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as { port: number }).port };
}

const fatal = (outcome: Outcome) => outcome.lines.filter((line) => line.level === 60).map((line) => String(line.msg));

describe('start-up failures are one clear JSON log line and exit 1', () => {
  beforeAll(async () => {
    await promisify(execFile)('npm', ['run', '-s', 'build'], { cwd: PROJECT });
    await createTestDatabase();
  }, 120_000);
  afterAll(() => dropTestDatabase());

  it('METRICS_PORT already in use (a second instance on the host) names METRICS_PORT and the way out', async () => {
    const taken = await occupy();
    const free = await occupy();
    free.server.close();
    try {
      const outcome = await start({ PORT: String(free.port), METRICS_PORT: String(taken.port) });
      expect(outcome.code).toBe(1);
      expect(fatal(outcome)).toEqual([
        `Latchkey could not start: METRICS_PORT: 127.0.0.1:${taken.port} is already in use (another Latchkey instance on this host?). Give each instance its own METRICS_PORT, or set METRICS_ENABLED=false`,
      ]);
      expect(outcome.text).not.toMatch(/\n\s+at /);
    } finally {
      taken.server.close();
    }
  }, 60_000);

  it('PORT already in use names PORT', async () => {
    const taken = await occupy();
    try {
      const outcome = await start({ PORT: String(taken.port), METRICS_ENABLED: 'false' });
      expect(outcome.code).toBe(1);
      expect(fatal(outcome)).toEqual([`Latchkey could not start: PORT: 127.0.0.1:${taken.port} is already in use; choose another PORT for this instance`]);
    } finally {
      taken.server.close();
    }
  }, 60_000);

  it('a numeric setting that is not a number says so, quoting the value', async () => {
    const outcome = await start({ PORT: '0', SHUTDOWN_TIMEOUT_SECONDS: 'soon', METRICS_ENABLED: 'false' });
    expect(outcome.code).toBe(1);
    expect(fatal(outcome)).toEqual(['Latchkey could not start: Invalid configuration:\n  - SHUTDOWN_TIMEOUT_SECONDS: must be a number (got "soon")']);
  }, 60_000);
});
