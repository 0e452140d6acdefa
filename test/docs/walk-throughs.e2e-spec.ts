/**
 * Issue 49: the shell walk-throughs of README.md and docs/ work as written. Each walk-through
 * (its blocks marked `<!-- walk-through: NAME -->`, docs/development.md "Runnable walk-throughs")
 * runs in one `bash -euo pipefail` in a fresh folder inside the project, so `npm run -s cli` and
 * `npx latchkey` work there as in a clone, with the machine's curl and openssl, against a server
 * started as `npm start` starts it (startAsNpmStart) on a fresh database, which the walk-throughs of
 * one installation share (INSTALLATIONS). That server listens on a free loopback port, not 3000
 * (another server may hold it): the test rewrites the documentation's `http://localhost:3000` in
 * each command to that server's address, which is also its issuer.
 * The test is the reader: it copies values from the answers and signs the person in
 * (walk-through-reader.ts); then it checks what the reader would see in each answer.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { readDatabaseConfig } from '../../src/config/database.config.js';
import { PROJECT } from '../helpers/cli.js';
import { startAsNpmStart, stopServer } from '../helpers/npm-start.js';
import { createTestDatabase, dropTestDatabase } from '../helpers/test-database.js';
import { documentedWalkThroughs, walkThroughsOf, type WalkThrough } from './walk-through-blocks.js';
import { printedJson, sameShape } from './walk-through-json.js';
import { commandLines, Reader, type Command, type Transcript } from './walk-through-reader.js';

/** The person of the walk-throughs, as Getting started creates her. */
const ALICE = { username: 'alice', password: 'correct horse battery staple' };

/** The command of the transcript that the page wrote matching `pattern` (the last, when several do), and its last JSON. */
function answer(transcript: Transcript, pattern: RegExp): { command: Command; json: Record<string, unknown> } {
  const command = transcript.commands.findLast((c) => pattern.test(c.documented));
  if (!command) throw new Error(`No command matching ${pattern} ran: ${transcript.commands.map((c) => c.documented).join('\n')}`);
  return { command, json: command.json.at(-1) as Record<string, unknown> };
}

const TOKENS = { access_token: expect.stringMatching(/^lk_at_/), token_type: 'bearer', expires_in: 3600, refresh_token: expect.stringMatching(/^lk_rt_/) };

/** The sign-in with a code of README.md and Getting started, up to a note written with the token. */
function expectCodeFlow(transcript: Transcript, issuer: URL): void {
  expect(answer(transcript, /users:create/).json).toMatchObject({ username: 'alice', has_password: true });
  expect(answer(transcript, /clients:create --name "Demo App"/).json).toMatchObject({ client_name: 'Demo App', client_secret: expect.stringMatching(/^lk_cs_/), redirect_uris: ['http://localhost:8080/callback'], scope: 'notes:read notes:write' });
  const authorize = new URL(answer(transcript, /^echo /).command.stdout.trim());
  expect(authorize.origin + authorize.pathname).toBe(`${issuer.origin}/authorize`);
  const [redirect] = transcript.redirects;
  expect(redirect.origin + redirect.pathname).toBe('http://localhost:8080/callback');
  expect(Object.fromEntries(redirect.searchParams)).toEqual({ code: expect.stringMatching(/^lk_ac_/), state: 'xyz', iss: issuer.origin });
  expect(answer(transcript, /grant_type=authorization_code/).json).toEqual({ ...TOKENS, scope: 'notes:read notes:write' });
  expect(answer(transcript, /Buy milk/).json).toMatchObject({ id: expect.any(String), title: 'Buy milk', tags: ['home'] });
}

/** What each documented walk-through must show, by `file: name`: each one in the documentation has an entry, and each entry is in the documentation. */
const EXPECTED: Record<string, (transcript: Transcript, issuer: URL) => void> = {
  'README.md: try-it': expectCodeFlow,
  'docs/getting-started.md: try-it': (transcript, issuer) => {
    expectCodeFlow(transcript, issuer);
    const first = answer(transcript, /grant_type=authorization_code/).json;
    const refreshed = answer(transcript, /grant_type=refresh_token/).json;
    expect(refreshed).toEqual({ ...TOKENS, scope: 'notes:read notes:write' });
    expect([refreshed.access_token, refreshed.refresh_token]).not.toContain(first.access_token);
    // The note was written with the refreshed token, and the list finds it by its tag.
    expect(answer(transcript, /^TOKEN=/).command.typed).toBe(`TOKEN='${refreshed.access_token as string}'`);
    const note = answer(transcript, /Buy milk/).json;
    expect(answer(transcript, /tags=home/).command.json).toEqual([[note]]);
    expect(answer(transcript, /users:update/).json).toMatchObject({ username: 'alice', email: 'alice@example.com', name: 'Alice Liddell', given_name: 'Alice', family_name: 'Liddell' });
    expect(answer(transcript, /"My app"/).json).toMatchObject({ client_name: 'My app', redirect_uris: ['http://127.0.0.1:8080/callback'], post_logout_redirect_uris: ['http://127.0.0.1:8080/'] });
  },
  // The person is the alice of README.md's Try it, on the same installation.
  'docs/guides/devices.md: device': (transcript, issuer) => {
    expect(answer(transcript, /clients:create/).json).toMatchObject({ client_name: 'My CLI', token_endpoint_auth_method: 'none', grant_types: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'] });
    expect(answer(transcript, /device_authorization/).json).toMatchObject({ device_code: expect.stringMatching(/^lk_dc_/), user_code: expect.stringMatching(/^[A-Z]{4}-[A-Z]{4}$/), verification_uri: `${issuer.origin}/device`, interval: 5 });
    expect(answer(transcript, /device_code="\$DEVICE_CODE"/).json).toMatchObject({ ...TOKENS, scope: 'notes:read openid', id_token: expect.any(String) });
  },
  'docs/guides/service-clients.md: client-credentials': (transcript) => {
    expect(answer(transcript, /clients:create/).json).toMatchObject({ client_name: 'Billing resource server', grant_types: ['client_credentials'], scope: 'tokens:introspect' });
    // No refresh token: there is no person to come back for (RFC 6749 §4.4.3).
    expect(answer(transcript, /client_credentials$/).json).toEqual({ access_token: expect.stringMatching(/^lk_at_/), token_type: 'bearer', expires_in: 3600, scope: 'tokens:introspect' });
  },
  'docs/operations/key-rotation.md: rotate': (transcript) => {
    const listed = answer(transcript, /keys:list/).json as unknown as { alg: string; state: string }[];
    expect(listed.map((k) => `${k.alg} ${k.state}`).sort()).toEqual(['ES256 signing', 'EdDSA signing', 'RS256 signing']);
    expect(answer(transcript, /keys:rotate/).json).toEqual([expect.objectContaining({ alg: 'RS256', state: 'next', kid: expect.any(String) })]);
  },
  'docs/guides/clients-as-code.md: apply': (transcript) => {
    const plan = [{ client_id: 'web-app', client_name: 'Web app', action: 'create' }, { client_id: 'spa', client_name: 'Single-page app', action: 'create' }];
    const dryRun = answer(transcript, /--dry-run/);
    expect(dryRun.json).toMatchObject({ dry_run: true, applied: false, plan });
    expect(dryRun.command.stderr).toMatch(/\+ create +web-app \("Web app"\)/);
    expect(answer(transcript, /clients\.yaml +#/).json).toMatchObject({ dry_run: false, applied: true, summary: { create: 2, update: 0, delete: 0 }, plan });
  },
};

/**
 * The installations the walk-throughs run on, each a fresh database with its own server, two at
 * once (one per core). An installation's walk-throughs run there one after the other, as a reader
 * goes on from one page to the next: the device guide's person is the alice README's Try it
 * created, and clients:apply, which deletes the clients its file does not list, comes first.
 */
const INSTALLATIONS = [
  ['README.md: try-it', 'docs/guides/devices.md: device', 'docs/operations/key-rotation.md: rotate', 'docs/guides/service-clients.md: client-credentials'],
  ['docs/guides/clients-as-code.md: apply', 'docs/getting-started.md: try-it'],
];

/** An installation's database (a SQLite file, a PostgreSQL schema) beside this file's own. */
function databaseOf(index: number): Record<string, string> {
  const config = readDatabaseConfig();
  return config.dialect === 'postgres' ? { DATABASE_SCHEMA: `${config.schema}_w${index}` } : { DATABASE_URL: `sqlite:${config.sqlitePath!.replace(/\.sqlite$/, '')}-w${index}.sqlite` };
}

describe('the runnable walk-throughs of README.md and docs/', () => {
  const found = documentedWalkThroughs();
  const outcomes = new Map<string, { transcript?: Transcript; issuer?: URL; error?: unknown }>();

  /** Starts a server on a fresh database and follows the installation's walk-throughs on it as the reader would, each in a fresh folder inside the project. */
  async function install(ids: string[], index: number): Promise<void> {
    const database = databaseOf(index);
    const env = { ...process.env, ...database };
    let server: ChildProcess | undefined;
    try {
      await createTestDatabase(env);
      const started = await startAsNpmStart(database);
      server = started.server;
      for (const walkThrough of ids.map((id) => found.walkThroughs.find((w) => w.id === id)).filter((w) => w !== undefined)) {
        const folder = await mkdtemp(join(PROJECT, 'scratch', 'walk-through-'));
        try {
          const transcript = await new Reader(started.issuer, ALICE).follow(walkThrough, folder, readersEnvironment(walkThrough, env));
          outcomes.set(walkThrough.id, { transcript, issuer: started.issuer });
        } catch (error) {
          outcomes.set(walkThrough.id, { error });
        } finally {
          await rm(folder, { recursive: true, force: true });
        }
      }
    } catch (error) {
      for (const id of ids) if (!outcomes.has(id)) outcomes.set(id, { error });
    } finally {
      await stopServer(server);
      await dropTestDatabase(env);
    }
  }

  beforeAll(async () => {
    await mkdir(join(PROJECT, 'scratch'), { recursive: true });
    // startAsNpmStart also creates this file's own schema; once here, so the installations do not race to (PostgreSQL's IF NOT EXISTS is not atomic).
    await createTestDatabase();
    await Promise.all(INSTALLATIONS.map((ids, index) => install(ids, index)));
  }, 120_000);
  afterAll(async () => {
    await dropTestDatabase();
    // scratch/ (git ignores it) goes too, unless something else of the developer's is in it.
    await rmdir(join(PROJECT, 'scratch')).catch(() => undefined);
  });

  it('finds marked blocks, and what the reader would copy (the check itself works)', () => {
    const page = ['## Try it', '<!-- walk-through: demo -->', '```sh', 'npm run -s cli -- users:create \\', '  --username alice', 'X=…; Y=lk_cs_… # copy', '```', '<!-- walk-through: demo, answer -->', '```json', '{"a":"lk_at_…"}', '```', '```sh', 'forgotten', '```', '<!-- walk-through: Demo -->', '```sh', '```'].join('\n');
    const { walkThroughs, problems, unmarked } = walkThroughsOf('page.md', page);
    expect(walkThroughs.map((w) => [w.id, w.steps.map((s) => s.kind)])).toEqual([['page.md: demo', ['run', 'answer']]]);
    expect(commandLines(walkThroughs[0].steps[0].text)).toEqual(['npm run -s cli -- users:create \\\n  --username alice', 'X=…; Y=lk_cs_… # copy']);
    expect(problems).toEqual(['page.md:15: a walk-through marker that does not parse: <!-- walk-through: Demo -->']);
    expect(unmarked).toEqual(['page.md:12 (section "Try it")', 'page.md:16 (section "Try it")']);
    expect(printedJson('{\n  "a": [1]\n}\nsee [this]\n{"b":"}"}')).toEqual([{ a: [1] }, { b: '}' }]);
    expect(sameShape({ a: 'lk_at_…', b: [{ c: 1 }] }, { a: 'lk_rt_x', b: [{ c: 2, d: 3 }], e: null })).toEqual(['$.e: printed, not documented', '$.a: documented as lk_at_…, printed lk_rt_x', '$.b[0].d: printed, not documented']);
  });

  it('every marker parses, every shell block of a walk-through\'s section is marked, and every walk-through is known here', () => {
    expect(found.problems).toEqual([]);
    expect(found.unmarked).toEqual([]);
    expect(found.walkThroughs.map((w) => w.id).sort()).toEqual(Object.keys(EXPECTED).sort());
    expect(INSTALLATIONS.flat().sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(Object.keys(EXPECTED))('%s: runs as written against `npm start`, and shows what the page says', (id) => {
    const outcome = outcomes.get(id);
    if (!outcome) throw new Error(`${id}: not in the documentation, so it did not run`);
    if (outcome.error) throw outcome.error;
    EXPECTED[id](outcome.transcript!, outcome.issuer!);
  });
});

/** The walk-through's environment (its database, as its server's) without the variables it sets itself, so a developer's own CLIENT_ID cannot stand in for a missing step. */
function readersEnvironment(walkThrough: WalkThrough, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const reader = { ...env };
  for (const step of walkThrough.steps) for (const [, name] of step.text.matchAll(/\$\{?([A-Z_][A-Z0-9_]*)/g)) delete reader[name];
  return reader;
}
