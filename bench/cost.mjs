#!/usr/bin/env node
/**
 * `npm run -s bench:cost`: the cost model. For each scenario, Latchkey alone (as `npm start` runs it,
 * on one core), on SQLite and on PostgreSQL, loaded until the core is saturated or the database
 * holds it back, and then, per request (a complete unit for the flows d and e):
 *
 *   server µs   CPU of the Latchkey process (/proc/<pid>/stat), whatever it spent it on
 *   db µs       CPU of every PostgreSQL process over the same window (0 on SQLite: it is in-process)
 *   idle %      the share of the server's wall time its CPU profile found idle: waiting for the
 *               database, not working (a saturated server is near 0)
 *   and where the server's CPU went, from a V8 CPU profile (--cpu-prof) of the same window: its
 *   µs per request split by the share of busy samples in the framework (Fastify, Nest, passport, class-validator), the database
 *   driver (node-postgres, TypeORM, better-sqlite3), crypto (node:crypto, jose), Latchkey's own code,
 *   garbage collection, and socket writes (writev: HTTP answers and database messages).
 *
 * BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test) for PostgreSQL;
 * BENCH_COST_SCENARIOS (a,c,d,e,f; h, i and j too), BENCH_COST_DATABASES (sqlite,postgres; postgres-unnamed
 * too: DATABASE_POOL_MODE=transaction on the same server), BENCH_SECONDS (5),
 * BENCH_SKIP_BUILD=1. Writes bench/results/cost-latest.json, a flame graph per scenario and database
 * (bench/results/flame-<database>-<scenario>.svg), and prints a Markdown table for
 * bench/RESULTS.md ("Cost model"). The profiler stays on for the whole run and adds a few per cent
 * to every figure alike. CPU per request moves less with a busy machine than req/s does, but
 * compare within one run.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { latchkey } from './targets/latchkey.mjs';
import { CATEGORIES, categoryShares, flameGraphSvg, monotonicMicros, readProfile } from './lib/cpu-profile.mjs';
import { closeAgents } from './lib/http.mjs';
import { scenarioLoad } from './lib/scenario-load.mjs';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const scenarios = (process.env.BENCH_COST_SCENARIOS ?? 'a,c,d,e,f').split(',');
const databases = (process.env.BENCH_COST_DATABASES ?? 'sqlite,postgres').split(',');
/** postgres-unnamed: PostgreSQL as through a transaction pooler, every statement unnamed (issue 44), for an A/B with postgres. */
const DATABASE_ENV = { 'postgres-unnamed': { DATABASE_POOL_MODE: 'transaction' } };
const postgresUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const WORKERS = 16;
const CONNECTIONS = 32;
const TICKS_PER_SECOND = 100;

// As bench/run.mjs: the server on core 0, this load generator on core 1.
const pinning = cpus().length >= 2 && spawnSync('taskset', ['-V']).status === 0;
if (pinning) execFileSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
if (!process.env.BENCH_SKIP_BUILD) execFileSync('npm', ['run', '-s', 'build'], { stdio: 'inherit' });

/** CPU ticks (user + system) of a process, 0 once it is gone. */
function ticks(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/** CPU ticks of every PostgreSQL process alive now, by pid (a backend may end within the window; those are counted while they live). */
function postgresTicks() {
  const byPid = new Map();
  for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith('postgres')) byPid.set(pid, ticks(pid));
    } catch {
      // gone
    }
  }
  return byPid;
}

function postgresSpent(before, after) {
  let spent = 0;
  for (const [pid, t] of after) spent += t - (before.get(pid) ?? 0);
  return spent;
}

/** Requests per unit: the flows are several requests, counted as one unit (as bench/run.mjs reports them). */
async function measure(target, server, ctx, scenario) {
  const definition = target.scenarios[scenario];
  const run = (s) => scenarioLoad(definition, ctx, { baseUrl: server.baseUrl, connections: CONNECTIONS, workers: WORKERS, seconds: s, rssMb: server.rssMb });
  await run(2);
  const serverBefore = ticks(server.pid);
  const postgresBefore = postgresTicks();
  const from = monotonicMicros();
  const result = await run(seconds);
  const window = [from, monotonicMicros()];
  const units = result.rps * seconds;
  const perUnit = (t) => Math.round((t * 1e6) / TICKS_PER_SECOND / units);
  return { window, rps: Math.round(result.rps), p99: result.p99, errors: result.errors, serverUs: perUnit(ticks(server.pid) - serverBefore), dbUs: perUnit(postgresSpent(postgresBefore, postgresTicks())) };
}

const rows = [];
mkdirSync('bench/results', { recursive: true });
try {
  for (const database of databases) {
    for (const scenario of scenarios) {
      // One server per scenario, so that its CPU profile is that scenario's alone.
      const profiles = mkdtempSync(join(tmpdir(), 'latchkey-cost-'));
      process.env.BENCH_NODE_ARGS = `--cpu-prof --cpu-prof-dir=${profiles}`;
      const target = latchkey({ name: `latchkey-${database}`, databaseUrl: database === 'sqlite' ? undefined : postgresUrl, targetEnv: DATABASE_ENV[database] ?? {} });
      const server = await target.start({ port: 46000 + Math.floor(Math.random() * 1000), cpu: pinning ? 0 : null, logFile: join('bench/results', `latchkey-cost-${database}.log`) });
      let measured;
      try {
        const ctx = await target.prepare(server.baseUrl, { workers: WORKERS, refresh: WORKERS });
        measured = await measure(target, server, ctx, scenario);
      } finally {
        closeAgents();
        await server.stop();
      }
      const file = readdirSync(profiles).find((name) => name.endsWith('.cpuprofile'));
      let idle = NaN;
      let shares = {};
      if (file) {
        const profile = readProfile(join(profiles, file), measured.window);
        ({ idle, shares } = categoryShares(profile));
        const requests = measured.rps * seconds;
        writeFileSync(join('bench/results', `flame-${database}-${scenario}.svg`), flameGraphSvg(profile, { title: `Latchkey on ${{ sqlite: 'SQLite', postgres: 'PostgreSQL', 'postgres-unnamed': 'PostgreSQL (unnamed statements)' }[database]}, scenario ${scenario}: where the server's CPU goes`, requests }));
      }
      rmSync(profiles, { recursive: true, force: true });
      const { window: _window, ...figures } = measured;
      const row = { database, scenario, ...figures, idle, shares };
      rows.push(row);
      console.log(JSON.stringify({ database, scenario, rps: row.rps, serverUs: row.serverUs, dbUs: row.dbUs, idle: Math.round(idle * 100) }));
    }
  }
} finally {
  delete process.env.BENCH_NODE_ARGS;
}

writeFileSync('bench/results/cost-latest.json', JSON.stringify({ date: new Date().toISOString(), node: process.version, seconds, rows }, null, 2));
// The server's CPU per request split by the profile's shares: µs per step.
const micros = (row, category) => (row.shares[category] === undefined ? '–' : String(Math.round(row.shares[category] * row.serverUs)));
console.log(`\n| scenario | database | req/s | server µs | db µs | idle | ${CATEGORIES.map((c) => `${c} µs`).join(' | ')} |`);
console.log(`|---|---|---|---|---|---|${CATEGORIES.map(() => '---').join('|')}|`);
for (const row of rows) {
  console.log(`| ${row.scenario} | ${row.database} | ${row.rps.toLocaleString('en')} | ${row.serverUs} | ${row.dbUs} | ${Math.round(row.idle * 100)}% | ${CATEGORIES.map((c) => micros(row, c)).join(' | ')} |`);
}
