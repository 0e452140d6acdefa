#!/usr/bin/env node
/**
 * `npm run -s bench:memory`: Latchkey's resident memory on PostgreSQL against its V8 heap settings.
 * For each setting in MEMORY_VARIANTS (a JSON list of Node option strings; default: what `npm start`
 * uses, then smaller heaps), one server starts as `npm start` runs it plus those options, and the
 * scenarios a, c, d, e and f run one after another (BENCH_SECONDS each, 5 by default). It prints the
 * RSS at idle, after preparation and the peak under each scenario, with each scenario's
 * throughput, so that a smaller heap is never bought with throughput unseen. One sitting, same
 * machine; pins like `npm run bench`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { scenarioLoad } from './lib/scenario-load.mjs';
import { latchkey } from './targets/latchkey.mjs';

const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const variants = JSON.parse(process.env.MEMORY_VARIANTS ?? '["", "--max-old-space-size=96", "--max-old-space-size=64"]');
const scenarios = (process.env.BENCH_SCENARIOS ?? 'a,c,d,e,f').split(',');
const pinning = cpus().length >= 2 && spawnSync('taskset', ['-V']).status === 0;
if (pinning) execFileSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
if (!process.env.BENCH_SKIP_BUILD) execFileSync('npm', ['run', '-s', 'build'], { stdio: 'inherit' });

mkdirSync('bench/results', { recursive: true });
const rows = [];
for (const variant of variants) {
  process.env.BENCH_NODE_ARGS = variant;
  const target = latchkey({ name: 'latchkey-postgres', databaseUrl });
  const server = await target.start({ port: 46000 + Math.floor(Math.random() * 1000), cpu: pinning ? 0 : null, logFile: 'bench/results/latchkey-memory.log' });
  try {
    const row = { variant: variant || '(npm start)', idleMb: server.rssMb() };
    const ctx = await target.prepare(server.baseUrl, { workers: 16 });
    row.preparedMb = server.rssMb();
    for (const scenario of scenarios) {
      const definition = target.scenarios[scenario];
      const result = await scenarioLoad(definition, ctx, { baseUrl: server.baseUrl, connections: 32, workers: 16, seconds, rssMb: server.rssMb });
      row[scenario] = { rps: Math.round(result.rps), p99: Number(result.p99.toFixed(1)), peakMb: Math.round(result.rssMb) };
    }
    rows.push(row);
    console.log(JSON.stringify(row));
  } finally {
    await server.stop();
  }
}
