/**
 * Graceful shutdown (issue #5): on SIGTERM the server stops accepting connections, lets a request
 * already in flight finish, closes its pool and exits 0, within SHUTDOWN_TIMEOUT_SECONDS; past
 * that bound it exits 1 anyway. The real built server runs as a child process (`npm start`'s
 * `node dist/src/main.js`), since signals and exit codes are what is being tested.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { promisify } from 'node:util';
import { freePort } from '../helpers/free-port.js';
import { createTestDatabase, dropTestDatabase } from '../helpers/test-database.js';

const PROJECT = new URL('../../', import.meta.url).pathname;
const BODY = 'grant_type=client_credentials&scope=notes%3Aread';

interface Server {
  child: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

async function startServer(env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    cwd: PROJECT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  for (let i = 0; i < 200 && !output.includes('Latchkey is listening'); i++) {
    if (child.exitCode !== null) throw new Error(`The server exited during start-up:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (!output.includes('Latchkey is listening')) throw new Error(`The server did not start:\n${output}`);
  return { child, port, output: () => output, exited };
}

/** A token request whose body is only half sent: in flight until `finish` sends the rest. */
async function halfSentRequest(port: number): Promise<{ socket: Socket; response: Promise<string>; finish: () => void }> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
  const response = once(socket, 'close').then(() => received);
  socket.write(
    `POST /token HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
      `Authorization: Basic ${Buffer.from('nobody:nothing').toString('base64')}\r\nContent-Length: ${BODY.length}\r\n\r\n${BODY.slice(0, 10)}`,
  );
  return { socket, response, finish: () => socket.write(BODY.slice(10)) };
}

async function connectionRefused(port: number): Promise<boolean> {
  return fetch(`http://127.0.0.1:${port}/health/live`).then(
    () => false,
    () => true,
  );
}

describe('graceful shutdown on SIGTERM', () => {
  beforeAll(async () => {
    await promisify(execFile)('npm', ['run', '-s', 'build'], { cwd: PROJECT });
    await createTestDatabase();
  }, 120_000);
  afterAll(() => dropTestDatabase());

  it('stops accepting, finishes the request in flight, then exits 0', async () => {
    const server = await startServer({ SHUTDOWN_TIMEOUT_SECONDS: '20' });
    const inFlight = await halfSentRequest(server.port);
    await new Promise((resolve) => setTimeout(resolve, 200));

    server.child.kill('SIGTERM');
    for (let i = 0; i < 100 && !(await connectionRefused(server.port)); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await connectionRefused(server.port)).toBe(true);
    expect(server.child.exitCode).toBeNull();

    inFlight.finish();
    const response = await inFlight.response;
    // The unknown client is refused as usual: the point is a complete answer, not a reset connection.
    expect(response).toMatch(/^HTTP\/1\.1 401 /);
    expect(response).toContain('"error":"invalid_client"');
    expect(await server.exited).toBe(0);
    expect(server.output()).toMatch(/SIGTERM received: finishing in-flight requests \(at most 20 s\)/);
    expect(server.output()).toMatch(/"msg":"Stopped"/);
  }, 60_000);

  it('exits 1 once SHUTDOWN_TIMEOUT_SECONDS has passed with a request still open', async () => {
    const server = await startServer({ SHUTDOWN_TIMEOUT_SECONDS: '1' });
    const stuck = await halfSentRequest(server.port);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const signalled = Date.now();
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(1);
    // Not before the bound, and not much after it (generous: the machine may be busy).
    expect(Date.now() - signalled).toBeGreaterThanOrEqual(900);
    expect(Date.now() - signalled).toBeLessThan(15_000);
    expect(server.output()).toMatch(/Shutdown took longer than 1 s/);
    stuck.socket.destroy();
  }, 60_000);

  it('writes nothing but JSON lines', async () => {
    const server = await startServer({});
    server.child.kill('SIGTERM');
    await server.exited;
    const lines = server.output().split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
  }, 60_000);
});
