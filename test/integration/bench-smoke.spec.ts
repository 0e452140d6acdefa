/**
 * Issue 47: `npm run bench` with realistic data must keep running on a fresh clone. Its prefill
 * copies template rows by bulk inserts, so a new unique column (the sessions' public id of issue
 * 48) broke it without any other test noticing. This runs the real harness (bench/run.mjs, the
 * built server) on Latchkey alone, with a handful of each kind of row and one short repeat of the
 * scenarios that use each prefilled table (a: access tokens, d: refresh families, e: signed-in
 * browsers and consents; c: clients), on this run's database (SQLite, or PostgreSQL in a schema of
 * its own when TEST_DATABASE_URL is set). It measures nothing: it checks that every scenario ran
 * without an error. Results go to a temporary directory, never over bench/results.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT } from '../helpers/cli.js';

interface SummaryRow {
  scenario: string;
  target: string;
  errors: number;
  rps: { median: number };
}

describe('npm run bench, on a handful of rows (issue 47)', () => {
  const results = mkdtempSync(join(tmpdir(), 'latchkey-bench-smoke-'));
  afterAll(() => rmSync(results, { recursive: true, force: true }));

  it('pre-fills every table and runs each scenario that reads them, without an error', async () => {
    const target = process.env.TEST_DATABASE_URL ? 'latchkey-postgres' : 'latchkey-sqlite';
    const env = {
      ...process.env,
      BENCH_TARGETS: target,
      BENCH_DATABASE_URL: process.env.TEST_DATABASE_URL ?? '',
      BENCH_PEER_REDIS: '0',
      BENCH_SKIP_BUILD: '1',
      BENCH_RESULTS_DIR: results,
      BENCH_SCENARIOS: 'a,c,d,e',
      BENCH_SECONDS: '1',
      BENCH_WARMUP_SECONDS: '0',
      BENCH_REPEATS: '1',
      BENCH_CONNECTIONS: '4',
      BENCH_WORKERS: '2',
      BENCH_CLIENTS: '20',
      BENCH_PEOPLE: '30',
      BENCH_ACCESS_TOKENS: '50',
      BENCH_REFRESH_FAMILIES: '10',
      BENCH_SESSIONS: '5',
    };
    const child = spawn(process.execPath, ['bench/run.mjs'], { cwd: PROJECT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect({ code, output: code === 0 ? '' : output }).toEqual({ code: 0, output: '' });

    const { summary } = JSON.parse(readFileSync(join(results, 'latest.json'), 'utf8')) as { summary: SummaryRow[] };
    expect(summary.map((row) => [row.scenario, row.target, row.errors]).sort()).toEqual(['a', 'c', 'd', 'e'].map((scenario) => [scenario, target, 0]));
    for (const row of summary) expect(row.rps.median).toBeGreaterThan(0);
  }, 180_000);
});
