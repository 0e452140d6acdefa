/**
 * The server started as `npm start` starts it: package.json's start script (its environment, Node
 * options and dist/src/main.js, read by the benchmark's startCommand) in a child process, on a free
 * loopback port that its ISSUER names, on this test file's database.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
// @ts-expect-error: the benchmark's plain-JavaScript helper has no type declarations.
import { startCommand } from '../../bench/lib/start-command.mjs';
import { freePort } from './app-at-issuer.js';
import { PROJECT } from './cli.js';
import { createTestDatabase } from './test-database.js';

/** The line the server logs once it listens. */
const LISTENING = 'Latchkey is listening';

/**
 * Creates the test database and starts the server; resolves once it listens (up to 15 s). A
 * server that exits or does not start in time fails with its output, and is not left running.
 * `env` changes the server's environment (undefined removes a variable): another deployment's database.
 */
export async function startAsNpmStart(env: Record<string, string | undefined> = {}): Promise<{ server: ChildProcess; issuer: URL }> {
  await createTestDatabase();
  const port = await freePort();
  const issuer = new URL(`http://127.0.0.1:${port}`);
  const start = startCommand() as { env: Record<string, string>; nodeArgs: string[]; entry: string };
  const serverEnv: Record<string, string | undefined> = { ...process.env, ...start.env, PORT: String(port), HOST: '127.0.0.1', ISSUER: issuer.origin, METRICS_ENABLED: 'false', ...env };
  for (const name of Object.keys(serverEnv)) if (serverEnv[name] === undefined) delete serverEnv[name];
  const server = spawn(process.execPath, [...start.nodeArgs, start.entry], {
    cwd: PROJECT,
    env: serverEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  server.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  server.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  try {
    for (let i = 0; i < 300 && !output.includes(LISTENING); i++) {
      if (server.exitCode !== null) throw new Error(`The server exited during start-up:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (!output.includes(LISTENING)) throw new Error(`The server did not start:\n${output}`);
  } catch (error) {
    await stopServer(server);
    throw error;
  }
  return { server, issuer };
}

/** SIGTERM, and waits for the exit; nothing when the server is not running (or was never started). */
export async function stopServer(server: ChildProcess | undefined): Promise<void> {
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    await once(server, 'exit');
  }
}
