/**
 * Issue 36's check of Idempotency-Key behind a load balancer that retries: three instances of one
 * database, each `node dist/src/main.js` in its own process; a client that retries every write
 * with its key on the next instance after a dropped connection, a 5xx or a 409 (as nginx does with
 * `proxy_next_upstream error timeout http_502 http_503 non_idempotent`); one instance killed
 * (SIGKILL) while requests to it are in flight. Every write answers 201 once all is done, and the
 * database holds exactly one item per key, the one each key's answer names.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { promisify } from 'node:util';
import { Item } from '../../src/items/item.entity.js';
import { obtainAccessToken } from '../helpers/api-client.js';
import { freePort } from '../helpers/app-at-issuer.js';
import { PROJECT } from '../helpers/cli.js';
import { TestApp } from '../helpers/test-app.js';

const WRITES = 60;
const CONCURRENCY = 6;
const KILL_AFTER = 20;
/** The instance killed mid-load. */
const VICTIM = 1;

interface Instance {
  child: ChildProcess;
  base: string;
}

async function startInstance(): Promise<Instance> {
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    cwd: PROJECT,
    // A claim held by the killed instance runs out within a second, so that the retries get through.
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', METRICS_ENABLED: 'false', PURGE_INTERVAL_SECONDS: '0', RATE_LIMIT_API_PER_MINUTE: '0', IDEMPOTENCY_CLAIM_SECONDS: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  for (let i = 0; i < 300 && !output.includes('Latchkey is listening'); i++) {
    if (child.exitCode !== null) throw new Error(`An instance exited during start-up:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (!output.includes('Latchkey is listening')) {
    child.kill('SIGKILL');
    throw new Error(`An instance did not start:\n${output}`);
  }
  return { child, base: `http://127.0.0.1:${port}` };
}

describe('Idempotency-Key on three instances, one killed mid-load (issue 36)', () => {
  let app: TestApp;
  const instances: Instance[] = [];

  beforeAll(async () => {
    await promisify(execFile)('npm', ['run', '-s', 'build'], { cwd: PROJECT });
    // The in-process app creates the database and its schema, and makes the person, client and token.
    app = await TestApp.start({ RATE_LIMIT_CLIENT_PER_MINUTE: '0', PURGE_INTERVAL_SECONDS: '0' });
    for (let i = 0; i < 3; i++) instances.push(await startInstance());
  }, 180_000);
  afterAll(async () => {
    for (const { child } of instances) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
    }
    await app?.stop();
  });

  it('writes one item per key, whatever was retried where', async () => {
    const user = await app.createUser();
    const client = await app.createClient({ scope: 'notes:read notes:write' });
    const token = await obtainAccessToken(app, client, user, 'notes:read notes:write');
    const run = randomUUID().slice(0, 8);
    const inFlight = [0, 0, 0];
    let answered = 0;
    let dropped = 0;
    let killed = false;

    /** One write as a retrying load balancer delivers it: the next instance after a failure, until an answer that is not 409 or 5xx. */
    async function write(index: number): Promise<{ title: string; id: string }> {
      const key = `"${randomUUID()}"`;
      const title = `load ${run} ${index}`;
      for (let attempt = 0; attempt < 60; attempt++) {
        const at = (index + attempt) % 3;
        inFlight[at]++;
        try {
          const response = await fetch(`${instances[at].base}/api/v1/notes`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
            body: JSON.stringify({ title }),
          });
          const body = (await response.json()) as { id?: string };
          if (response.status === 201) return { title, id: body.id! };
          if (response.status !== 409 && response.status < 500) throw new Error(`POST answered ${response.status}: ${JSON.stringify(body)}`);
        } catch (error) {
          if (error instanceof Error && error.message.startsWith('POST answered')) throw error;
          dropped++; // The connection broke: the instance died under this request.
        } finally {
          inFlight[at]--;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`${title} never got an answer`);
    }

    const results: { title: string; id: string }[] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < WRITES) {
        const index = next++;
        results.push(await write(index));
        answered++;
      }
    };
    // Kill the victim once the load is under way, at a moment a request to it is in flight.
    const watchdog = setInterval(() => {
      if (!killed && answered >= KILL_AFTER && inFlight[VICTIM] > 0) {
        killed = true;
        instances[VICTIM].child.kill('SIGKILL');
      }
    }, 1);
    try {
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    } finally {
      clearInterval(watchdog);
    }

    expect(killed).toBe(true);
    expect(instances[VICTIM].child.signalCode ?? (await once(instances[VICTIM].child, 'exit'))[1]).toBe('SIGKILL');
    expect(results).toHaveLength(WRITES);
    expect(new Set(results.map((result) => result.id)).size).toBe(WRITES);
    const items = (await app.dataSource.getRepository(Item).findBy({ collection: 'notes' })).filter((item) => String(item.data.title).startsWith(`load ${run} `));
    // No duplicates: one item per key, and it is the one that key's answer named.
    expect(items).toHaveLength(WRITES);
    const byTitle = new Map(items.map((item) => [item.data.title as string, item.id]));
    for (const result of results) expect(byTitle.get(result.title)).toBe(result.id);
    // The kill did cut requests off (else this test proved nothing about a dying instance).
    expect(dropped).toBeGreaterThanOrEqual(1);
  }, 120_000);
});
