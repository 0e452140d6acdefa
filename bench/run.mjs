#!/usr/bin/env node
/**
 * `npm run bench`: Latchkey against a bare Fastify baseline and node-oidc-provider, in one run, on
 * this machine. Servers on one core, this load generator on another (taskset); each scenario is
 * warmed up, then measured for BENCH_SECONDS, BENCH_REPEATS times, the servers taking turns. Prints
 * one table and writes bench/results/<time>.json, latest.json and latest.svg.
 *
 * node-oidc-provider runs twice, on the same Node as Latchkey: `oidc-provider` keeps its records in
 * its own process (a Map), `oidc-provider-redis` in Redis at REDIS_URL (redis://127.0.0.1:6379),
 * through an adapter laid out as oidc-provider's documented Redis example
 * (bench/servers/oidc-provider-redis-adapter.mjs), its keys under a `bench:oidc:<random>:` prefix
 * that is deleted when it stops. The Redis peer runs whenever Redis answers a PING at start
 * (BENCH_PEER_REDIS=0 leaves it out; when Redis does not answer, one line says it was left out).
 * Latchkey on SQLite is compared with the in-memory peer (each keeps its state on the machine it
 * runs on), Latchkey on PostgreSQL with the Redis one (each on a network store that several
 * instances could share): the table, latest.json (`ratios`, `ratiosByTarget`) and the chart give
 * both candidates' ratios against both peers.
 *
 * BENCH_DATABASE_URL=postgres://…  also runs Latchkey on PostgreSQL; with BENCH_VARIANT_NODE_ARGS
 * (say "--heap-growing-percent=50") a second PostgreSQL instance, latchkey-postgres-variant, runs
 * with those Node options added, for an A/B in one sitting; BENCH_VARIANT_ENV (JSON, say
 * '{"DATABASE_POOL_MODE":"transaction"}') gives it settings instead. BENCH_TARGETS=name,name runs only those.
 * BENCH_SECONDS (8), BENCH_WARMUP_SECONDS (2), BENCH_REPEATS (3), BENCH_CONNECTIONS (32),
 * BENCH_WORKERS (16), BENCH_SCENARIOS (a,b10k,b100k,c,d,e,f,g,h,i,j), BENCH_SKIP_BUILD=1, BENCH_RESULTS_DIR (bench/results).
 * The scenarios are listed in bench/lib/report.mjs (SCENARIOS); h is e as OpenID Connect: scope
 * openid and a nonce, an RS256 ID token in every token response (checked), oidc-provider likewise.
 * i is a with a DPoP-bound token and a fresh proof per request, signed before the run
 * (bench/lib/dpop.mjs); oidc-provider reads userinfo the same way, with nonces required too.
 * j is c for a private_key_jwt client (RFC 7523): a fresh ES256 client assertion per token request,
 * signed before the run (bench/lib/client-assertion.mjs), aud the issuer; oidc-provider likewise.
 *
 * Issue 47: every target is pre-filled, before any timing, with the cardinality of
 * bench/lib/cardinality.mjs (BENCH_CARDINALITY=realistic|one, BENCH_CLIENTS, BENCH_PEOPLE,
 * BENCH_ACCESS_TOKENS, …), and the scenarios pick a client, token, person or session per request
 * or flow. The prefill's seconds are logged and kept (latest.json `prepare`).
 * BENCH_TOKEN_CURVE=1,20000,200000,1000000 then measures, after the table, the token-dependent
 * scenarios (a, f, i, c; those of BENCH_SCENARIOS) at each number of live access tokens, on the
 * targets that can add tokens (`grow`: latchkey-postgres, oidc-provider-redis), each level once:
 * a second table and latest.json `curve`. At level 1 every pick is the one token.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import baseline from './targets/baseline.mjs';
import { latchkey } from './targets/latchkey.mjs';
import { oidcProvider } from './targets/oidc-provider.mjs';
import { DEFAULT_REDIS_URL, redisAnswers } from './servers/oidc-provider-redis-adapter.mjs';
import { describeCardinality, readCardinality } from './lib/cardinality.mjs';
import { closeAgents } from './lib/http.mjs';
import { scenarioLoad } from './lib/scenario-load.mjs';
import { checkTargets, ratios, renderCurveTable, renderSvg, renderTable, summarize, SCENARIOS } from './lib/report.mjs';

const settings = {
  seconds: Number(process.env.BENCH_SECONDS ?? 8),
  warmupSeconds: Number(process.env.BENCH_WARMUP_SECONDS ?? 2),
  repeats: Number(process.env.BENCH_REPEATS ?? 3),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 32),
  workers: Number(process.env.BENCH_WORKERS ?? 16),
  scenarios: (process.env.BENCH_SCENARIOS ?? 'a,b10k,b100k,c,d,e,f,g,h,i,j').split(','),
};
/** Where the results go (BENCH_RESULTS_DIR: test/integration/bench-smoke.spec.ts writes elsewhere, not over the committed ones). */
const RESULTS = process.env.BENCH_RESULTS_DIR || 'bench/results';
const started = Date.now();
const cardinality = readCardinality();
settings.cardinality = cardinality;
/** Issue 47: numbers of live access tokens to measure the token-dependent scenarios at, after the table. */
const CURVE_SCENARIOS = ['a', 'f', 'i', 'c'];
const tokenCurve = (process.env.BENCH_TOKEN_CURVE ?? '').split(',').filter(Boolean).map((level) => {
  const value = Number(level);
  if (!Number.isInteger(value) || value < 1) throw new Error(`BENCH_TOKEN_CURVE: ${level} is no whole number ≥ 1`);
  return value;
});
if (tokenCurve.length) settings.tokenCurve = tokenCurve;
const prepared = {};

// Two cores or more: servers on core 0, the load generator (this process) on core 1.
const pinning = cpus().length >= 2 && spawnSync('taskset', ['-V']).status === 0;
const serverCpu = pinning ? 0 : null;
if (pinning) execFileSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
settings.serverCpu = serverCpu;
settings.loadCpu = pinning ? 1 : null;

/** oidc-provider's scenarios under our letters: what it can do of ours. */
const OIDC_SCENARIOS = { a: 'read', c: 'clientCredentials', d: 'refresh', e: 'flow', f: 'introspect', h: 'openIdFlow', i: 'dpopRead', j: 'privateKeyJwtClientCredentials' };
function adaptOidcProvider(target) {
  const scenarios = {};
  for (const [letter, name] of Object.entries(OIDC_SCENARIOS)) {
    const definition = target.scenarios[name];
    if (name === 'dpopRead') scenarios[letter] = { kind: 'dpop', read: definition };
    else if (name === 'privateKeyJwtClientCredentials') scenarios[letter] = { kind: 'assertion', token: definition };
    else scenarios[letter] = ['refresh', 'flow', 'openIdFlow'].includes(name) ? { kind: 'steps', make: definition } : { kind: 'fixed', request: definition };
  }
  return { ...target, scenarios };
}

const targets = [baseline, adaptOidcProvider(oidcProvider()), latchkey({ name: 'latchkey-sqlite' })];
if (process.env.BENCH_DATABASE_URL) targets.push(latchkey({ name: 'latchkey-postgres', databaseUrl: process.env.BENCH_DATABASE_URL }));
// An A/B of Node options in one sitting: the same build on PostgreSQL with these options added, taking turns with the others.
// Or of settings: BENCH_VARIANT_ENV='{"DATABASE_POOL_MODE":"transaction"}' (unnamed statements, issue 44).
if (process.env.BENCH_DATABASE_URL && (process.env.BENCH_VARIANT_NODE_ARGS || process.env.BENCH_VARIANT_ENV)) {
  const variant = { nodeArgs: process.env.BENCH_VARIANT_NODE_ARGS ?? '', targetEnv: JSON.parse(process.env.BENCH_VARIANT_ENV || '{}') };
  targets.push(latchkey({ name: 'latchkey-postgres-variant', databaseUrl: process.env.BENCH_DATABASE_URL, ...variant }));
}

/** oidc-provider on Redis, beside the in-memory one, unless left out or Redis does not answer. */
async function addRedisPeer() {
  if (process.env.BENCH_PEER_REDIS === '0') return;
  const redisUrl = process.env.REDIS_URL || DEFAULT_REDIS_URL;
  const answer = await redisAnswers(redisUrl);
  if (!answer.ok) {
    log(`oidc-provider-redis left out: Redis at ${redisUrl.replace(/\/\/[^@/]*@/, '//')} does not answer (${answer.reason})`);
    return;
  }
  targets.splice(targets.findIndex((t) => t.name === 'oidc-provider') + 1, 0, adaptOidcProvider(oidcProvider({ name: 'oidc-provider-redis', store: 'redis', redisUrl })));
}

function log(message) {
  console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${message}`);
}

async function main() {
  mkdirSync(RESULTS, { recursive: true });
  await addRedisPeer();
  if (process.env.BENCH_TARGETS) {
    const wanted = new Set(process.env.BENCH_TARGETS.split(','));
    targets.splice(0, targets.length, ...targets.filter((target) => wanted.has(target.name)));
  }
  if (!process.env.BENCH_SKIP_BUILD) {
    log('building Latchkey');
    execFileSync('npm', ['run', '-s', 'build'], { stdio: 'inherit' });
  }
  log(`data: ${describeCardinality(cardinality)}`);
  const running = [];
  try {
    let port = 41000 + Math.floor(Math.random() * 2000);
    for (const target of targets) {
      log(`starting ${target.name}`);
      const server = await target.start({ port: port++, cpu: serverCpu, logFile: join(RESULTS, `${target.name}.log`) });
      running.push(server);
      log(`preparing ${target.name}`);
      const prepareStarted = performance.now();
      const ctx = await target.prepare(server.baseUrl, { workers: settings.workers, refresh: settings.workers, cardinality });
      const seconds = (performance.now() - prepareStarted) / 1000;
      prepared[target.name] = { seconds: round1(seconds), ...(ctx?.prefillSeconds !== undefined && { prefillSeconds: round1(ctx.prefillSeconds) }) };
      log(`prepared ${target.name} in ${seconds.toFixed(1)} s${ctx?.prefillSeconds !== undefined ? ` (prefill ${ctx.prefillSeconds.toFixed(1)} s)` : ''}`);
      target.server = server;
      target.ctx = ctx;
    }

    const runs = [];
    for (let repeat = 1; repeat <= settings.repeats; repeat++) {
      for (const scenario of settings.scenarios) {
        // The servers take turns within each repeat, so a slow drift of the machine hits them all alike.
        const order = targets.filter((t) => t.scenarios[scenario]);
        for (const target of repeat % 2 === 0 ? [...order].reverse() : order) {
          const result = await measure(target, scenario);
          runs.push({ target: target.name, scenario, repeat, ...result });
          log(`${scenario.padEnd(5)} ${target.name.padEnd(19)} #${repeat}: ${Math.round(result.rps).toLocaleString('en')}/s, p99 ${result.p99.toFixed(1)} ms, ${result.errors} errors, ${result.rssMb.toFixed(0)} MB${result.firstError ? ` (first error: ${result.firstError})` : ''}`);
        }
      }
    }
    const results = report(runs);
    if (tokenCurve.length) report(runs, await measureCurve(), results);
  } finally {
    closeAgents();
    await Promise.allSettled(running.map((server) => server.stop()));
  }
}

async function measure(target, scenario) {
  const definition = target.scenarios[scenario];
  const { server, ctx } = target;
  const run = (seconds) => scenarioLoad(definition, ctx, { baseUrl: server.baseUrl, connections: settings.connections, workers: settings.workers, seconds, rssMb: server.rssMb });
  if (settings.warmupSeconds > 0) await run(settings.warmupSeconds);
  await sleep(200);
  return run(settings.seconds);
}

/** Issue 47's token curve: each level of live access tokens, each target that can grow, each token-dependent scenario once. */
async function measureCurve() {
  const growing = targets.filter((target) => target.grow);
  const scenarios = CURVE_SCENARIOS.filter((scenario) => settings.scenarios.includes(scenario));
  if (growing.length === 0) log('token curve: no target here can add tokens (grow)');
  const curve = [];
  for (const level of tokenCurve) {
    for (const target of growing) {
      const seconds = await target.grow(target.ctx, level);
      log(`curve ${level.toLocaleString('en')} tokens: ${target.name} ready (${(seconds ?? 0).toFixed(1)} s of inserts)`);
      for (const scenario of scenarios.filter((s) => target.scenarios[s])) {
        const result = await measure(target, scenario);
        curve.push({ level, target: target.name, scenario, rps: result.rps, p50: result.p50, p99: result.p99, errors: result.errors, rssMb: result.rssMb, growSeconds: round1(seconds ?? 0) });
        log(`curve ${String(level).padStart(8)} ${scenario.padEnd(2)} ${target.name.padEnd(19)}: ${Math.round(result.rps).toLocaleString('en')}/s, p99 ${result.p99.toFixed(1)} ms, ${result.errors} errors, ${result.rssMb.toFixed(0)} MB${result.firstError ? ` (first error: ${result.firstError})` : ''}`);
      }
    }
  }
  return curve;
}

function round1(value) {
  return Math.round(value * 10) / 10;
}

/** Writes the results (and, given `curve`, adds it to those already written) and prints the tables. */
function report(runs, curve, written) {
  if (curve) {
    const results = { ...written, curve, durationSeconds: Math.round((Date.now() - started) / 1000) };
    writeResults(results);
    console.log(`\nLive access tokens × target × scenario (${describeCardinality(cardinality)} otherwise; each level once):\n\n${renderCurveTable(curve)}`);
    console.log(`\nWritten: ${RESULTS}/latest.json (${results.durationSeconds} s in all)`);
    return results;
  }
  const summary = summarize(runs);
  const ratioRows = ratios(summary);
  // Every Latchkey that ran, against both peers (`ratios` above is latchkey-sqlite's, as before).
  const ratiosByTarget = Object.fromEntries(
    [...new Set(summary.map((row) => row.target))].filter((target) => target.startsWith('latchkey-')).map((target) => [target, ratios(summary, target)]),
  );
  const targetChecks = checkTargets(summary);
  const machine = {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    commit: spawnSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim(),
    date: new Date().toISOString(),
  };
  const results = { machine, settings, prepare: prepared, scenarios: SCENARIOS, runs, summary, ratios: ratioRows, ratiosByTarget, targets: targetChecks, durationSeconds: Math.round((Date.now() - started) / 1000) };
  writeResults(results);
  writeFileSync(join(RESULTS, 'latest.svg'), renderSvg(summary, { latchkeyTarget: 'latchkey-sqlite', title: `Latchkey benchmark, ${machine.cpus} cores, Node ${machine.node}, ${machine.date.slice(0, 10)}` }));
  console.log(`\n${renderTable(summary, ratioRows, targetChecks, { latchkeyTarget: 'latchkey-sqlite', heading: `Data: ${describeCardinality(cardinality)}` })}`);
  console.log(`\nWritten: ${RESULTS}/latest.json, ${RESULTS}/latest.svg (${results.durationSeconds} s in all)`);
  return results;
}

function writeResults(results) {
  const stamp = results.machine.date.replace(/[:.]/g, '-');
  writeFileSync(join(RESULTS, `${stamp}.json`), JSON.stringify(results, null, 2));
  writeFileSync(join(RESULTS, 'latest.json'), JSON.stringify(results, null, 2));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
