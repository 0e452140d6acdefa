#!/usr/bin/env node
/**
 * `npm run -s bench:steps`: where a flow's CPU goes. Latchkey alone (as `npm start` runs it, on
 * SQLite, one core), each endpoint of the benchmark's scenarios loaded on its own until the core is
 * saturated; the cost of a request is then 1 / throughput. A complete OpenID code flow (scenario h)
 * is authorize + token exchange + read, and the table says which of them to work on.
 *
 * Steps (BENCH_STEPS picks some, comma-separated):
 *   live         GET /health/live: the framework's floor (Fastify, Nest, the hooks every request runs)
 *   read         GET an item with a bearer token (scenario a)
 *   dpop-read    the same with a DPoP-bound token and a proof per request (scenario i)
 *   authorize    GET /authorize in a signed-in, consented session: the 302 with a code
 *   authorize-openid   the same with scope openid and a nonce
 *   token        POST /token redeeming a code (made beforehand, one per request), PKCE S256
 *   token-openid the same for an openid code: an RS256 ID token signed per exchange
 *   cc           POST /token client_credentials with HTTP Basic (scenario c)
 *   cc-jwt       the same with a private_key_jwt assertion per request (scenario j)
 * BENCH_SECONDS (5), BENCH_CONNECTIONS (32), BENCH_SKIP_BUILD=1. Figures vary by ±10% between runs
 * on this machine: compare steps within one run, and changes by alternating runs.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { latchkey } from './targets/latchkey.mjs';
import { assertionTokenLoad } from './lib/client-assertion.mjs';
import { dpopReadLoad } from './lib/dpop.mjs';
import { basicAuth, closeAgents, FORM, request } from './lib/http.mjs';
import { readCardinality } from './lib/cardinality.mjs';
import { fixedRequestLoad, varyingRequestLoad } from './lib/load.mjs';

const STEPS = ['live', 'read', 'dpop-read', 'authorize', 'authorize-openid', 'token', 'token-openid', 'cc', 'cc-jwt'];
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const chosen = (process.env.BENCH_STEPS ?? STEPS.join(',')).split(',');
const unknown = chosen.filter((step) => !STEPS.includes(step));
if (unknown.length > 0) throw new Error(`Unknown steps ${unknown.join(', ')}; the steps are ${STEPS.join(', ')}`);

const REDIRECT_URI = 'http://127.0.0.1/cb';
const SCOPE = 'notes:read notes:write';
/** Codes made per second of a token step: more than the fastest exchange rate seen here (about 4,800/s). */
const CODES_PER_SECOND = 6_000;

// As bench/run.mjs: the server on core 0, this load generator on core 1.
const pinning = cpus().length >= 2 && spawnSync('taskset', ['-V']).status === 0;
if (pinning) execFileSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
if (!process.env.BENCH_SKIP_BUILD) execFileSync('npm', ['run', '-s', 'build'], { stdio: 'inherit' });

const target = latchkey({ name: 'latchkey-steps' });
const server = await target.start({ port: 43000 + Math.floor(Math.random() * 1000), cpu: pinning ? 0 : null, logFile: join('bench/results', 'latchkey-steps.log') });
try {
  // One client, person and token: this measures each endpoint's own cost (npm run bench has the realistic data).
  const ctx = await target.prepare(server.baseUrl, { workers: 1, cardinality: readCardinality({ BENCH_CARDINALITY: 'one' }) });
  const { baseUrl } = server;
  const load = { baseUrl, connections, rssMb: server.rssMb };
  const verifier = randomBytes(32).toString('base64url');
  const authorizePath = (scope) =>
    `/authorize?${new URLSearchParams({ response_type: 'code', client_id: ctx.credentials.clientId, redirect_uri: REDIRECT_URI, scope, state: 'steps', nonce: 'steps', code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256' })}`;
  const cookie = ctx.sessionA.header();
  const clientBasic = basicAuth(ctx.credentials.clientId, ctx.credentials.clientSecret);

  /** Codes for `scope`, made before the run (each is redeemed once). */
  async function codes(scope, count) {
    const made = [];
    while (made.length < count) {
      const answers = await Promise.all(Array.from({ length: 32 }, () => request(baseUrl, { path: authorizePath(scope), headers: { cookie } })));
      for (const answer of answers) made.push(new URL(answer.headers.location).searchParams.get('code'));
    }
    return made;
  }
  async function exchange(scope, runSeconds) {
    const pool = await codes(scope, Math.ceil(runSeconds * CODES_PER_SECOND));
    let next = 0;
    return varyingRequestLoad({
      ...load,
      seconds: runSeconds,
      request: { method: 'POST', path: '/token', headers: { authorization: clientBasic, 'content-type': FORM } },
      nextBody: () => new URLSearchParams({ grant_type: 'authorization_code', code: pool[next++ % pool.length], redirect_uri: REDIRECT_URI, code_verifier: verifier }).toString(),
    });
  }
  const bearer = { authorization: `Bearer ${ctx.accessA}` };
  const runs = {
    live: (s) => fixedRequestLoad({ ...load, seconds: s, request: { method: 'GET', path: '/health/live' } }),
    read: (s) => fixedRequestLoad({ ...load, seconds: s, request: { method: 'GET', path: `/api/v1/notes/${ctx.itemId}`, headers: bearer } }),
    'dpop-read': (s) => dpopReadLoad({ ...load, seconds: s, read: { path: `/api/v1/notes/${ctx.itemId}`, accessToken: ctx.dpop.accessToken, key: ctx.dpop.key } }),
    authorize: (s) => fixedRequestLoad({ ...load, seconds: s, expect: 302, request: { method: 'GET', path: authorizePath(SCOPE), headers: { cookie } } }),
    'authorize-openid': (s) => fixedRequestLoad({ ...load, seconds: s, expect: 302, request: { method: 'GET', path: authorizePath(`openid ${SCOPE}`), headers: { cookie } } }),
    token: (s) => exchange(SCOPE, s),
    'token-openid': (s) => exchange(`openid ${SCOPE}`, s),
    cc: (s) => fixedRequestLoad({ ...load, seconds: s, request: { method: 'POST', path: '/token', headers: { authorization: clientBasic, 'content-type': FORM }, body: 'grant_type=client_credentials&scope=notes%3Aread' } }),
    'cc-jwt': (s) => assertionTokenLoad({ ...load, seconds: s, token: { path: '/token', form: 'grant_type=client_credentials&scope=notes%3Aread', ...ctx.jwtClient } }),
  };

  const rows = [];
  for (const step of STEPS.filter((name) => chosen.includes(name))) {
    await runs[step](1); // warm-up
    const result = await runs[step](seconds);
    if (result.errors > 0) console.warn(`${step}: ${result.errors} errors${result.firstError ? ` (first: ${result.firstError})` : ''}`);
    rows.push({ step, rps: result.rps, micros: 1e6 / result.rps });
    console.log(`${step.padEnd(17)} ${Math.round(result.rps).toLocaleString('en').padStart(7)}/s  ${(1e6 / result.rps).toFixed(0).padStart(4)} µs per request`);
  }
  const cost = Object.fromEntries(rows.map((row) => [row.step, row.micros]));
  if (cost.authorize && cost.token && cost.read) console.log(`\ncode flow (e) ≈ authorize + token + read = ${(cost.authorize + cost.token + cost.read).toFixed(0)} µs → ${Math.round(1e6 / (cost.authorize + cost.token + cost.read)).toLocaleString('en')} flows/s`);
  if (cost['authorize-openid'] && cost['token-openid'] && cost.read) {
    const flow = cost['authorize-openid'] + cost['token-openid'] + cost.read;
    console.log(`OpenID code flow (h) ≈ authorize-openid + token-openid + read = ${flow.toFixed(0)} µs → ${Math.round(1e6 / flow).toLocaleString('en')} flows/s`);
  }
} finally {
  closeAgents();
  await server.stop();
}
