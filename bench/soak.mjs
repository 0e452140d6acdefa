#!/usr/bin/env node
/**
 * `npm run -s bench:soak`: Latchkey on PostgreSQL under a realistic mix for a long while, with the
 * purge running, to see that nothing drifts. The mix: 90% bearer reads of an item, 5% refreshes
 * with rotation, 3% complete code flows (authorize, token with PKCE, one read), 2%
 * client_credentials. First the mix runs flat out for SOAK_CALIBRATE_SECONDS (10) to find the
 * maximum; then it is offered at SOAK_LOAD (0.7) of that rate, open-loop (the rate does not fall when
 * the server slows), for SOAK_SECONDS (600). Every 10 s it records throughput, p99, errors, the
 * server's RSS and the database's size.
 *
 * Tokens expire and are purged within the run (access tokens 60 s, refresh tokens 300 s, the purge
 * every 30 s with no grace period), so the tokens table reaches the size where the purge keeps up;
 * reads use the newest access tokens the refreshes and code flows issued, and (issue 47) every other
 * one a prefilled token. The data are those of `npm run bench` (bench/lib/cardinality.mjs,
 * BENCH_CARDINALITY…), prefilled the same way; flows, refreshes and client_credentials pick a
 * browser, a family or a client as the bench does.
 *
 * SOAK_RATE=<ops/s> offers that rate instead of SOAK_LOAD × the calibrated maximum.
 * BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), BENCH_SKIP_BUILD=1. Where
 * the server runs with autovacuum off, the soak turns it on for the run (it needs a superuser) and
 * off again afterwards; SOAK_KEEP_AUTOVACUUM=1 measures with it off.
 * Writes bench/results/soak-latest.json and soak-latest.svg, and prints its verdicts.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describeCardinality, readCardinality } from './lib/cardinality.mjs';
import { closeAgents, request } from './lib/http.mjs';
import { codeFlow, latchkey, tokenRequest } from './targets/latchkey.mjs';

const seconds = Number(process.env.SOAK_SECONDS ?? 600);
const calibrateSeconds = Number(process.env.SOAK_CALIBRATE_SECONDS ?? 10);
const load = Number(process.env.SOAK_LOAD ?? 0.7);
const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const WINDOW_SECONDS = 10;
const MAX_IN_FLIGHT = 512;
const MIX = [
  ['read', 0.9],
  ['refresh', 0.05],
  ['flow', 0.03],
  ['clientCredentials', 0.02],
];

const pinning = cpus().length >= 2 && spawnSync('taskset', ['-V']).status === 0;
if (pinning) execFileSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
if (!process.env.BENCH_SKIP_BUILD) execFileSync('npm', ['run', '-s', 'build'], { stdio: 'inherit' });

process.env.BENCH_LATCHKEY_ENV = JSON.stringify({
  ACCESS_TOKEN_TTL_SECONDS: '60',
  REFRESH_TOKEN_TTL_SECONDS: '300',
  PURGE_INTERVAL_SECONDS: '30',
  PURGE_GRACE_SECONDS: '0',
  ...JSON.parse(process.env.BENCH_LATCHKEY_ENV || '{}'),
});
const target = latchkey({ name: 'latchkey-postgres', databaseUrl });
mkdirSync('bench/results', { recursive: true });
const server = await target.start({ port: 47000 + Math.floor(Math.random() * 1000), cpu: pinning ? 0 : null, logFile: join('bench/results', 'latchkey-soak.log') });
const database = new pg.Client({ connectionString: databaseUrl });
await database.connect();
// The database as a default installation runs it: autovacuum makes the space of the rows the purge
// deletes reusable. Some development machines turn it off (this one did: the tokens table kept every
// deleted row, and the database grew with the purge's whole throughput); the soak turns it on for
// its run and restores the setting afterwards. SOAK_KEEP_AUTOVACUUM=1 leaves it as it is.
const autovacuumWasOff = (await database.query('SHOW autovacuum')).rows[0].autovacuum === 'off';
const turnAutovacuumOn = autovacuumWasOff && !process.env.SOAK_KEEP_AUTOVACUUM;
if (turnAutovacuumOn) {
  await database.query('ALTER SYSTEM SET autovacuum = on');
  await database.query('SELECT pg_reload_conf()');
  console.log('autovacuum is off on this PostgreSQL: on for the soak, as in a default installation, and off again afterwards');
}

try {
  // Issue 47: the same data as `npm run bench` (BENCH_CARDINALITY and its counts), prefilled alike.
  const cardinality = readCardinality();
  console.log(`data: ${describeCardinality(cardinality)}`);
  const ctx = await target.prepare(server.baseUrl, { workers: 16, cardinality });
  console.log(`prefill: ${ctx.prefillSeconds.toFixed(1)} s`);
  const schema = (await database.query("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'latchkey_bench_%' ORDER BY oid DESC LIMIT 1")).rows[0].nspname;
  // The bench data were just written (140,000 items among them): a deployment that runs autovacuum
  // vacuumed and analysed such tables long ago. Do it once here, before calibrating, so the run does
  // not measure autovacuum's first sweep of every table (in an earlier soak it shed 12,726
  // operations in the first 20 s doing that).
  if (!autovacuumWasOff || turnAutovacuumOn) {
    const tables = (await database.query("SELECT tablename FROM pg_tables WHERE schemaname = $1", [schema])).rows;
    for (const { tablename } of tables) await database.query(`VACUUM (ANALYZE) "${schema}"."${tablename}"`);
  }
  const databaseMb = async () =>
    Number((await database.query('SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = $2', [schema, 'r'])).rows[0].bytes) / 2 ** 20;

  // The newest access tokens (they live 60 s), each with the path of its person's note: the reads use them in turn.
  const fresh = [];
  const remember = (tokens, person) => {
    fresh.push({ token: tokens.access_token, path: ctx.itemPaths[person % ctx.people] });
    if (fresh.length > 64) fresh.shift();
  };
  remember(await codeFlow(ctx.baseUrl, ctx.credentials, ctx.sessions.values[0].jar), ctx.sessions.values[0].person);
  // Refresh chains are used one request at a time each: two at once would be reuse, which revokes the chain.
  const idleChains = ctx.refresh.tokens.map((_, i) => i);
  let readAt = 0;
  const ops = {
    // Half the reads with the newest tokens (the purge's share), half with a prefilled one, picked (issue 47).
    read: async () => {
      // Token k is person k % people's (latchkey-prefill.mjs); a fresh one carries its person's path.
      const k = ctx.tokens.count > 1 && readAt++ % 2 === 0 ? ctx.tokens.pick() : -1;
      const { token, path } = k >= 0 ? { token: ctx.tokens.values[k], path: ctx.itemPaths[k % ctx.people] } : fresh[readAt++ % fresh.length];
      const response = await request(ctx.baseUrl, { path, headers: { authorization: `Bearer ${token}` } });
      if (response.status !== 200) throw new Error(`read: ${response.status} ${response.body.slice(0, 200)}`);
    },
    refresh: async () => {
      const chain = idleChains.shift();
      if (chain === undefined) return ops.read();
      try {
        const response = await request(ctx.baseUrl, tokenRequest(ctx.credentials, { grant_type: 'refresh_token', refresh_token: ctx.refresh.tokens[chain] }));
        if (response.status !== 200) throw new Error(`refresh: ${response.status} ${response.body.slice(0, 200)}`);
        const tokens = JSON.parse(response.body);
        ctx.refresh.tokens[chain] = tokens.refresh_token;
        // Family k is person k % people's (latchkey-prefill.mjs).
        remember(tokens, chain);
      } finally {
        idleChains.push(chain);
      }
    },
    flow: async () => {
      const session = ctx.sessions.values[ctx.sessions.pick()];
      const tokens = await codeFlow(ctx.baseUrl, ctx.credentials, session.jar);
      remember(tokens, session.person);
      const response = await request(ctx.baseUrl, { path: ctx.itemPaths[session.person], headers: { authorization: `Bearer ${tokens.access_token}` } });
      if (response.status !== 200) throw new Error(`flow's read: ${response.status}`);
    },
    clientCredentials: async () => {
      const client = ctx.clients.values[ctx.clients.pick()];
      const response = await request(ctx.baseUrl, { ...tokenRequest(client, { grant_type: 'client_credentials', scope: 'notes:read' }) });
      if (response.status !== 200) throw new Error(`client_credentials: ${response.status}`);
    },
  };
  const pick = () => {
    let r = Math.random();
    for (const [name, share] of MIX) if ((r -= share) < 0) return name;
    return MIX[0][0];
  };

  /** Runs one operation of the mix, recording its latency or its error in `window`. */
  let window = { latencies: [], errors: 0, firstError: undefined };
  let inFlight = 0;
  const runOne = async () => {
    inFlight++;
    const begin = performance.now();
    try {
      await ops[pick()]();
      window.latencies.push(performance.now() - begin);
    } catch (error) {
      window.errors++;
      window.firstError ??= error.message;
    } finally {
      inFlight--;
    }
  };

  // Calibration: the mix flat out, 32 at a time.
  const calibrationEnd = performance.now() + calibrateSeconds * 1000;
  await Promise.all(Array.from({ length: 32 }, async () => {
    while (performance.now() < calibrationEnd) await runOne();
  }));
  const maximum = window.latencies.length / calibrateSeconds;
  if (window.errors > 0) throw new Error(`calibration had ${window.errors} errors; first: ${window.firstError}`);
  // SOAK_RATE fixes the offered rate instead (ops/s): to repeat a run whose calibration the machine disturbed.
  const rate = process.env.SOAK_RATE ? Number(process.env.SOAK_RATE) : maximum * load;
  console.log(`maximum ${Math.round(maximum)} ops/s; offering ${Math.round(rate)} ops/s (${(rate / maximum).toFixed(2)}×) for ${seconds} s`);

  // The soak: open-loop at `rate`, a window every WINDOW_SECONDS.
  const windows = [];
  const started = performance.now();
  let offered = 0;
  let shed = 0;
  window = { latencies: [], errors: 0, firstError: undefined };
  let windowStart = started;
  while (performance.now() - started < seconds * 1000) {
    const due = Math.floor(((performance.now() - started) / 1000) * rate);
    for (; offered < due; offered++) {
      if (inFlight >= MAX_IN_FLIGHT) shed++;
      else void runOne();
    }
    if (performance.now() - windowStart >= WINDOW_SECONDS * 1000) {
      const done = window;
      window = { latencies: [], errors: 0, firstError: undefined };
      done.latencies.sort((a, b) => a - b);
      const row = {
        at: Math.round((performance.now() - started) / 1000),
        opsPerSecond: done.latencies.length / ((performance.now() - windowStart) / 1000),
        p99: done.latencies[Math.floor(done.latencies.length * 0.99)] ?? NaN,
        errors: done.errors,
        firstError: done.firstError,
        rssMb: server.rssMb(),
        databaseMb: await databaseMb(),
        shed,
      };
      windows.push(row);
      windowStart = performance.now();
      console.log(`${String(row.at).padStart(4)} s: ${Math.round(row.opsPerSecond)} ops/s, p99 ${row.p99.toFixed(1)} ms, ${row.errors} errors, RSS ${row.rssMb.toFixed(0)} MB, database ${row.databaseMb.toFixed(1)} MB${row.firstError ? ` (${row.firstError})` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  while (inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 10));

  const verdicts = judge(windows, rate);
  const autovacuum = autovacuumWasOff && !turnAutovacuumOn ? 'off' : 'on';
  const results = { date: new Date().toISOString(), node: process.version, seconds, load: Number((rate / maximum).toFixed(2)), maximum, rate, mix: Object.fromEntries(MIX), autovacuum, windows, verdicts };
  writeFileSync('bench/results/soak-latest.json', JSON.stringify(results, null, 2));
  writeFileSync('bench/results/soak-latest.svg', renderSvg(results));
  console.log('');
  for (const verdict of verdicts) console.log(`${verdict.met ? 'met ' : 'NOT '} ${verdict.what}: ${verdict.measured}`);
  console.log('\nWritten: bench/results/soak-latest.json, bench/results/soak-latest.svg');
} finally {
  closeAgents();
  if (turnAutovacuumOn) {
    await database.query('ALTER SYSTEM RESET autovacuum');
    await database.query('SELECT pg_reload_conf()');
  }
  await database.end();
  await server.stop();
}

/** The issue's criteria: stable from the first minute to the last, RSS flat after warm-up, the database bounded, no errors. */
function judge(windows, rate) {
  const minute = (from) => windows.filter((w) => w.at > from && w.at <= from + 60);
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const first = minute(0);
  const last = minute(Math.max(0, windows.at(-1).at - 60));
  const tput = [median(first.map((w) => w.opsPerSecond)), median(last.map((w) => w.opsPerSecond))];
  const p99 = [median(first.map((w) => w.p99)), median(last.map((w) => w.p99))];
  const warm = windows.filter((w) => w.at > 120);
  const rss = [warm[0]?.rssMb, windows.at(-1).rssMb];
  const half = windows.filter((w) => w.at > windows.at(-1).at / 2);
  const db = [half[0]?.databaseMb, windows.at(-1).databaseMb];
  const errors = windows.reduce((sum, w) => sum + w.errors, 0);
  const shed = windows.at(-1).shed;
  return [
    { what: 'throughput, last minute against the first (within 5% of the offered rate)', measured: `${Math.round(tput[0])} → ${Math.round(tput[1])} ops/s (offered ${Math.round(rate)})`, met: Math.abs(tput[1] - tput[0]) <= 0.05 * rate },
    { what: 'p99, last minute at most 1.5× the first', measured: `${p99[0].toFixed(1)} → ${p99[1].toFixed(1)} ms`, met: p99[1] <= 1.5 * p99[0] },
    { what: 'RSS after warm-up (2 minutes) grows by at most 10%', measured: `${rss[0]?.toFixed(0)} → ${rss[1].toFixed(0)} MB`, met: rss[0] !== undefined && rss[1] <= 1.1 * rss[0] },
    { what: 'database size over the second half grows by at most 10%', measured: `${db[0]?.toFixed(1)} → ${db[1].toFixed(1)} MB`, met: db[0] !== undefined && db[1] <= 1.1 * db[0] },
    { what: 'no errors, nothing shed', measured: `${errors} errors, ${shed} operations shed`, met: errors === 0 && shed === 0 },
  ];
}

/** Three panels over time: throughput against the offered rate, p99, and RSS with the database's size. */
function renderSvg({ windows, rate, seconds: total, load: share, date }) {
  const W = 900;
  const H = 170;
  const left = 60;
  const plotW = W - left - 20;
  const x = (at) => left + (at / total) * plotW;
  const panel = (index, title, series, unit) => {
    const top = 50 + index * (H + 30);
    const max = Math.max(...series.flatMap((s) => s.values.map((v) => v[1])).filter(Number.isFinite)) * 1.15 || 1;
    const y = (value) => top + H - (value / max) * H;
    const lines = series
      .map((s) => `<polyline fill="none" stroke="${s.colour}" stroke-width="2" ${s.dashed ? 'stroke-dasharray="6 4"' : ''} points="${s.values.map(([at, v]) => `${x(at).toFixed(1)},${y(v).toFixed(1)}`).join(' ')}"/>`)
      .join('');
    const legend = series.map((s, i) => `<text x="${left + 10 + i * 230}" y="${top + 14}" fill="${s.colour}">${s.name}</text>`).join('');
    return `<text x="${left}" y="${top - 8}" font-weight="600">${title}</text><rect x="${left}" y="${top}" width="${plotW}" height="${H}" fill="none" stroke="#ccc"/>` +
      `<text x="${left - 6}" y="${top + 10}" text-anchor="end">${Math.round(max)}</text><text x="${left - 6}" y="${top + H}" text-anchor="end">0</text><text x="${left - 6}" y="${top + H / 2}" text-anchor="end">${unit}</text>${lines}${legend}`;
  };
  const series = (key) => windows.map((w) => [w.at, w[key]]);
  const height = 50 + 3 * (H + 30) + 20;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${height}" font-family="system-ui, sans-serif" font-size="12" role="img" aria-label="Latchkey soak on PostgreSQL: throughput, p99 and memory over time">
<rect width="100%" height="100%" fill="#fff"/>
<text x="${left}" y="22" font-size="15" font-weight="600">Latchkey on PostgreSQL, ${total} s at ${share}× its maximum (${date.slice(0, 10)})</text>
${panel(0, 'Throughput (ops/s), the mix: 90% reads, 5% refreshes, 3% code flows, 2% client_credentials', [{ name: 'served', colour: '#2f5f9e', values: series('opsPerSecond') }, { name: 'offered', colour: '#999', dashed: true, values: windows.map((w) => [w.at, rate]) }], 'ops/s')}
${panel(1, 'p99 latency of the mix (ms)', [{ name: 'p99', colour: '#d9534f', values: series('p99') }], 'ms')}
${panel(2, 'Memory (MB)', [{ name: 'server RSS', colour: '#4e9a6f', values: series('rssMb') }, { name: 'database size (tables and indexes)', colour: '#e8a33d', values: series('databaseMb') }], 'MB')}
${[0, 0.25, 0.5, 0.75, 1].map((f) => `<text x="${x(f * total).toFixed(1)}" y="${50 + 3 * (H + 30) - 14}" text-anchor="middle">${Math.round(f * total)} s</text>`).join('')}
</svg>
`;
}
