import { ApiClient, obtainAccessToken } from '../helpers/api-client.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { clientCredentialsStatus } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient } from '../helpers/test-app.js';

/**
 * Issue 43: the admin CLI works while the server runs (docs/reference/cli.md), also when several
 * calls write at once and the server writes too. On SQLite each CLI process is a second connection
 * to the server's file: a write transaction that began deferred (BEGIN, a SELECT, then the INSERT)
 * could not become a writer once another connection had committed (SQLITE_BUSY_SNAPSHOT), and the
 * busy timeout did not apply, so the call failed at once with "database is locked".
 */

const ROUNDS = 4;
/** Concurrent CLI writes per round, users:create and clients:create alternating. */
const CALLS_PER_ROUND = 8;
/**
 * Each CLI call is a process of its own (0.6 s on an idle machine: docs/reference/cli.md); on a
 * 2-core machine shared with other test runs, 8 at once took up to 50 s a round, hence the limit.
 */
const TEST_TIMEOUT_MS = 300_000;

interface CliWrite {
  kind: 'user' | 'client';
  name: string;
  result: CliResult;
}

/** A write the CLI did not finish as it should: exit 0, nothing on stderr. */
function failure({ kind, name, result }: CliWrite): string | undefined {
  if (result.code === 0 && result.stderr === '') return undefined;
  return `${kind} ${name}: exit ${String(result.code)}: ${result.stderr.split('\n')[0]}`;
}

/** Runs `send` one request after another until `stop()`, keeping every status it answered. */
function keepSending(send: () => Promise<number>): { statuses: number[]; stop: () => Promise<void> } {
  const statuses: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) statuses.push(await send());
  })();
  return {
    statuses,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

describe('the admin CLI writing while the server runs and writes (issue 43)', () => {
  let app: TestApp;
  let service: RegisteredClient;
  let api: ApiClient;

  beforeAll(async () => {
    // Built before the rounds start (a stale dist/ is built by the first call), so they time only the writes.
    expect((await runCli(['--help'])).code).toBe(0);
    // The traffic below is far above the default per-client limits; they are not what is tested.
    app = await TestApp.start({ RATE_LIMIT_CLIENT_PER_MINUTE: '0', RATE_LIMIT_API_PER_MINUTE: '0' });
    service = await app.createClient({ grantTypes: ['client_credentials'], scope: 'notes:read' });
    const owner = await app.createUser();
    const webApp = await app.createClient({ scope: 'notes:write' });
    api = new ApiClient(app, await obtainAccessToken(app, webApp, owner, 'notes:write'));
  }, 120_000);
  afterAll(async () => app?.stop());

  it(`${ROUNDS} rounds of ${CALLS_PER_ROUND} concurrent users:create and clients:create all exit 0 and store their rows, and every server request succeeds`, async () => {
    // The server writes throughout: a token row per client_credentials grant, an item per POST.
    const tokens = keepSending(() => clientCredentialsStatus(app.baseUrl, service));
    const notes = keepSending(async () => (await api.post('/api/v1/notes', { title: 'written during the CLI calls' })).status);
    const writes: CliWrite[] = [];
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const calls = Array.from({ length: CALLS_PER_ROUND }, async (_, i): Promise<CliWrite> => {
          const name = `concurrent-${round}-${i}`;
          if (i % 2 === 0) return { kind: 'user', name, result: await runCli(['users:create', '--username', name, '--password', 'correct horse battery staple']) };
          return { kind: 'client', name, result: await runCli(['clients:create', '--name', name, '--redirect-uri', 'https://app.example.test/cb', '--scope', 'notes:read']) };
        });
        writes.push(...(await Promise.all(calls)));
      }
    } finally {
      await Promise.all([tokens.stop(), notes.stop()]);
    }

    // One assertion, so that a failure shows the CLI's and the server's side together.
    expect({
      cliFailures: writes.map(failure).filter((line) => line !== undefined),
      tokenRequestsFailed: tokens.statuses.filter((status) => status !== 200),
      notesFailed: notes.statuses.filter((status) => status !== 201),
    }).toEqual({ cliFailures: [], tokenRequestsFailed: [], notesFailed: [] });
    expect(writes).toHaveLength(ROUNDS * CALLS_PER_ROUND);
    // The server kept answering throughout.
    expect(tokens.statuses.length).toBeGreaterThan(0);
    expect(notes.statuses.length).toBeGreaterThan(0);

    const users = writes.filter((write) => write.kind === 'user');
    const storedUsers = (await app.dataSource.createQueryBuilder().select('u.id', 'id').addSelect('u.username', 'username').from('users', 'u').getRawMany()) as { id: string; username: string }[];
    for (const { name, result } of users) {
      expect(storedUsers).toContainEqual({ id: (JSON.parse(result.stdout) as { id: string }).id, username: name });
    }
    const clients = writes.filter((write) => write.kind === 'client');
    const storedClients = (await app.dataSource.createQueryBuilder().select('c.id', 'id').addSelect('c.name', 'name').from('clients', 'c').getRawMany()) as { id: string; name: string }[];
    for (const { name, result } of clients) {
      expect(storedClients).toContainEqual({ id: (JSON.parse(result.stdout) as { client_id: string }).client_id, name });
    }
  }, TEST_TIMEOUT_MS);
});
