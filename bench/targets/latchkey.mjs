/**
 * Latchkey as production runs it (package.json's `start` command, NODE_ENV=production) on the embedded
 * SQLite default, or on PostgreSQL when a database URL is given. Clients and users are made with
 * the admin CLI, tokens through the real authorization-code flow, and the list scenario's items
 * are inserted straight into the database (110,000 POSTs would take minutes and measure nothing).
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { assertionKey } from '../lib/client-assertion.mjs';
import { dpopKey, dpopTokenRequest } from '../lib/dpop.mjs';
import { basicAuth, CookieJar, expectIdToken, expectStatus, FORM, request } from '../lib/http.mjs';
import { startServer } from '../lib/processes.mjs';
import { startCommand } from '../lib/start-command.mjs';

const REDIRECT_URI = 'http://127.0.0.1/cb';
const USER_SCOPE = 'notes:read notes:write';
// Scenario h: the same, as an OpenID Connect authentication (an ID token per exchange, RS256 by default).
const OPENID_SCOPE = `openid ${USER_SCOPE}`;
const PASSWORD = 'correct horse battery staple';

/**
 * `targetEnv`: settings of this target only, over the ones below (an A/B of settings in one sitting).
 * With DATABASE_POOL_MODE=transaction, which refuses DATABASE_SCHEMA (a transaction pooler drops
 * the search_path), the target gets a database of its own instead of a schema, and listens through
 * the same URL (DATABASE_LISTEN_URL), as a deployment whose DATABASE_URL goes through PgBouncer would.
 */
export function latchkey({ name, databaseUrl, nodeArgs = process.env.BENCH_NODE_ARGS ?? '', targetEnv = {} }) {
  let env;
  let cleanup = () => {};

  return {
    name,
    async start({ port, cpu, logFile }) {
      const baseUrl = `http://127.0.0.1:${port}`;
      const dir = mkdtempSync(join(tmpdir(), 'latchkey-bench-'));
      env = {
        NODE_ENV: 'production',
        // A benchmark on loopback: plain http, and SQLite, which production refuses by default.
        ALLOW_UNSAFE: 'sqlite,http,generated-keys',
        HOST: '127.0.0.1',
        PORT: String(port),
        ISSUER: baseUrl,
        LOG_LEVEL: 'warn',
        METRICS_PORT: '0',
        MIGRATIONS_RUN: 'true',
        // One client and one token make thousands of requests a second here: the limits would be
        // the only thing measured. The guards still run; with the limit at 0 they return at once
        // without counting (bench/RESULTS.md).
        RATE_LIMIT_CLIENT_PER_MINUTE: '0',
        RATE_LIMIT_API_PER_MINUTE: '0',
        LOGIN_FREE_FAILURES: '1000',
        LOGIN_IP_FREE_FAILURES: '1000000',
      };
      if (databaseUrl && targetEnv.DATABASE_POOL_MODE === 'transaction') {
        const database = `latchkey_bench_${randomBytes(4).toString('hex')}`;
        await withPg(databaseUrl, (client) => client.query(`CREATE DATABASE "${database}"`));
        const url = new URL(databaseUrl);
        url.pathname = `/${database}`;
        Object.assign(env, { DATABASE_URL: url.toString(), DATABASE_LISTEN_URL: url.toString() });
        cleanup = () => withPg(databaseUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`));
      } else if (databaseUrl) {
        const schema = `latchkey_bench_${randomBytes(4).toString('hex')}`;
        await withPg(databaseUrl, (client) => client.query(`CREATE SCHEMA "${schema}"`));
        Object.assign(env, { DATABASE_URL: databaseUrl, DATABASE_SCHEMA: schema });
        cleanup = () => withPg(databaseUrl, (client) => client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
      } else {
        env.DATABASE_URL = `sqlite:${join(dir, 'latchkey.sqlite')}`;
      }
      // Settings to compare in one sitting (BENCH_LATCHKEY_ENV='{"DATABASE_POOL_SIZE":"20"}'), over the ones above.
      Object.assign(env, JSON.parse(process.env.BENCH_LATCHKEY_ENV || '{}'), targetEnv);
      // As `npm start` runs it: its environment and Node options, then any BENCH_NODE_ARGS (a profiler) or the variant's options.
      const start = startCommand();
      const args = [...start.nodeArgs, ...nodeArgs.split(' ').filter(Boolean), start.entry];
      const server = await startServer({ name, command: process.execPath, args, env: { ...start.env, ...env }, cpu, readyUrl: `${baseUrl}/health/ready`, logFile });
      return {
        ...server,
        baseUrl,
        async stop() {
          await server.stop();
          await cleanup();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },

    async prepare(baseUrl, { workers }) {
      const client = cli(env, 'clients:create', '--name', 'Bench', '--redirect-uri', REDIRECT_URI, '--scope', `${USER_SCOPE} tokens:introspect`,
        '--grant-type', 'authorization_code', '--grant-type', 'refresh_token', '--grant-type', 'client_credentials');
      const credentials = { clientId: client.client_id, clientSecret: client.client_secret };
      for (const username of ['bench-a', 'bench-b']) cli(env, 'users:create', '--username', username, '--password', PASSWORD);

      // A logged-in browser per user, with consent given once and remembered from then on.
      const sessionA = await signIn(baseUrl, 'bench-a');
      const sessionB = await signIn(baseUrl, 'bench-b');
      const tokensA = await codeFlow(baseUrl, credentials, sessionA, true);
      const tokensB = await codeFlow(baseUrl, credentials, sessionB, true);
      // Consent to openid too (it adds to the one given above), for scenario h.
      await codeFlow(baseUrl, credentials, sessionA, true, { scope: OPENID_SCOPE });

      // Scenario i: an access token bound to an ES256 key, from a code exchange with a DPoP proof.
      const dpop = dpopKey();
      const dpopTokens = await codeFlow(baseUrl, credentials, sessionA, false, {}, dpop);
      if (dpopTokens.token_type?.toLowerCase() !== 'dpop') throw new Error(`code exchange with a DPoP proof: token_type ${dpopTokens.token_type}, expected DPoP`);

      // Scenario j: a client that authenticates with private_key_jwt (ES256, its public key
      // registered as a JWK Set), client_credentials only; its assertions' aud is the issuer.
      const jwtKey = assertionKey();
      const jwtClient = cli(env, 'clients:create', '--name', 'Bench private_key_jwt', '--auth-method', 'private_key_jwt', '--jwks', JSON.stringify(jwtKey.jwks),
        '--auth-signing-alg', 'ES256', '--grant-type', 'client_credentials', '--scope', 'notes:read');
      const { issuer } = JSON.parse(expectStatus(await request(baseUrl, { path: '/.well-known/openid-configuration' }), 200, 'discovery').body);

      const itemId = await seedItems(baseUrl, env, tokensA.access_token, 10_000);
      await seedItems(baseUrl, env, tokensB.access_token, 100_000);

      const refreshTokens = [];
      for (let i = 0; i < workers; i++) refreshTokens.push((await codeFlow(baseUrl, credentials, sessionA)).refresh_token);
      return {
        baseUrl,
        credentials,
        sessionA,
        accessA: tokensA.access_token,
        accessB: tokensB.access_token,
        itemId,
        refreshTokens,
        dpop: { key: dpop, accessToken: dpopTokens.access_token },
        jwtClient: { clientId: jwtClient.client_id, audience: issuer, key: jwtKey },
      };
    },

    scenarios: {
      a: { kind: 'fixed', request: (ctx) => ({ method: 'GET', path: `/api/v1/notes/${ctx.itemId}`, headers: { authorization: `Bearer ${ctx.accessA}` } }) },
      b10k: { kind: 'fixed', request: (ctx) => ({ method: 'GET', path: '/api/v1/notes?limit=20', headers: { authorization: `Bearer ${ctx.accessA}` } }) },
      b100k: { kind: 'fixed', request: (ctx) => ({ method: 'GET', path: '/api/v1/notes?limit=20', headers: { authorization: `Bearer ${ctx.accessB}` } }) },
      c: {
        kind: 'fixed',
        request: (ctx) => ({ method: 'POST', path: '/token', headers: { authorization: basicAuth(ctx.credentials.clientId, ctx.credentials.clientSecret), 'content-type': FORM }, body: 'grant_type=client_credentials&scope=notes%3Aread' }),
      },
      d: {
        kind: 'steps',
        make: (ctx, worker) => async () => {
          const response = await request(ctx.baseUrl, tokenRequest(ctx.credentials, { grant_type: 'refresh_token', refresh_token: ctx.refreshTokens[worker] }));
          ctx.refreshTokens[worker] = JSON.parse(expectStatus(response, 200, 'refresh').body).refresh_token;
        },
      },
      e: {
        kind: 'steps',
        make: (ctx) => async () => {
          const tokens = await codeFlow(ctx.baseUrl, ctx.credentials, ctx.sessionA);
          const read = await request(ctx.baseUrl, { path: `/api/v1/notes/${ctx.itemId}`, headers: { authorization: `Bearer ${tokens.access_token}` } });
          expectStatus(read, 200, 'API read');
        },
      },
      f: {
        kind: 'fixed',
        request: (ctx) => ({ method: 'POST', path: '/introspect', headers: { authorization: basicAuth(ctx.credentials.clientId, ctx.credentials.clientSecret), 'content-type': FORM }, body: `token=${ctx.accessA}` }),
      },
      g: {
        kind: 'steps',
        make: (ctx) => async () => {
          await signIn(ctx.baseUrl, 'bench-a');
        },
      },
      h: {
        kind: 'steps',
        make: (ctx) => async () => {
          const nonce = randomBytes(8).toString('hex');
          const tokens = expectIdToken(await codeFlow(ctx.baseUrl, ctx.credentials, ctx.sessionA, false, { scope: OPENID_SCOPE, nonce }), { alg: 'RS256', nonce });
          const read = await request(ctx.baseUrl, { path: `/api/v1/notes/${ctx.itemId}`, headers: { authorization: `Bearer ${tokens.access_token}` } });
          expectStatus(read, 200, 'API read');
        },
      },
      // a with a DPoP-bound token: `Authorization: DPoP`, and a proof per request (bench/lib/dpop.mjs).
      i: { kind: 'dpop', read: (ctx) => ({ path: `/api/v1/notes/${ctx.itemId}`, accessToken: ctx.dpop.accessToken, key: ctx.dpop.key }) },
      // c for a private_key_jwt client: a fresh client assertion per request (bench/lib/client-assertion.mjs).
      j: { kind: 'assertion', token: (ctx) => ({ path: '/token', form: 'grant_type=client_credentials&scope=notes%3Aread', ...ctx.jwtClient }) },
    },
  };
}

function cli(env, ...args) {
  const result = spawnSync(process.execPath, ['dist/src/cli/main.js', ...args], { env: { PATH: process.env.PATH, ...env }, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`latchkey ${args[0]} failed (${result.status}): ${result.stderr}`);
  return JSON.parse(result.stdout);
}

export function tokenRequest(credentials, form) {
  return {
    method: 'POST',
    path: '/token',
    headers: { authorization: basicAuth(credentials.clientId, credentials.clientSecret), 'content-type': FORM },
    body: new URLSearchParams(form).toString(),
  };
}

/** The sign-in page, then its form: a new browser session logged in as `username`. */
async function signIn(baseUrl, username) {
  const jar = new CookieJar();
  const page = jar.store(expectStatus(await request(baseUrl, { path: '/login' }), 200, 'login page'));
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)[1];
  const body = new URLSearchParams({ csrf_token: csrf, return_to: '/', username, password: PASSWORD }).toString();
  jar.store(expectStatus(await request(baseUrl, { method: 'POST', path: '/login', headers: { cookie: jar.header(), 'content-type': FORM }, body }), 303, 'login'));
  return jar;
}

/**
 * GET /authorize with PKCE in a logged-in session → (the consent form, the first time) → 302 with a
 * code → POST /token. Returns the token response. `params` add to or replace the authorization
 * request's (scope, nonce). With a DPoP key, the code is redeemed with a proof of it (and the
 * server's nonce, when it asks for one): the access token is then bound to the key.
 */
export async function codeFlow(baseUrl, credentials, jar, mayAskConsent = false, params = {}, dpop = undefined) {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const query = new URLSearchParams({ response_type: 'code', client_id: credentials.clientId, redirect_uri: REDIRECT_URI, scope: USER_SCOPE, state: 'bench', code_challenge: challenge, code_challenge_method: 'S256', ...params });
  let response = jar.store(await request(baseUrl, { path: `/authorize?${query}`, headers: { cookie: jar.header() } }));
  if (response.status === 200 && mayAskConsent) {
    const form = Object.fromEntries([...response.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], m[2].replace(/&amp;/g, '&')]));
    const body = new URLSearchParams({ ...form, decision: 'allow' }).toString();
    response = jar.store(await request(baseUrl, { method: 'POST', path: '/consent', headers: { cookie: jar.header(), 'content-type': FORM }, body }));
  }
  expectStatus(response, [302, 303], 'authorize');
  const code = new URL(response.headers.location).searchParams.get('code');
  if (!code) throw new Error(`no code in ${response.headers.location}`);
  const exchange = tokenRequest(credentials, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier });
  const token = dpop ? await dpopTokenRequest(baseUrl, dpop, exchange) : await request(baseUrl, exchange);
  return JSON.parse(expectStatus(token, 200, 'code exchange').body);
}

/**
 * `count` notes for the token's owner: the first through the API (so its row has exactly the form
 * Latchkey writes), the others copied from it with fresh, increasing UUIDv7 ids. Returns the first id.
 */
async function seedItems(baseUrl, env, accessToken, count) {
  const created = await request(baseUrl, {
    method: 'POST',
    path: '/api/v1/notes',
    headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'Bench note', body: 'Seeded for the list scenario', done: false, tags: ['bench'] }),
  });
  const { id } = JSON.parse(expectStatus(created, 201, 'create note').body);
  const ids = Array.from({ length: count - 1 }, uuidV7Sequence());
  if (env.DATABASE_URL.startsWith('sqlite:')) {
    const db = new Database(env.DATABASE_URL.slice('sqlite:'.length));
    db.pragma('busy_timeout = 10000');
    const insert = db.prepare('INSERT INTO items (id, collection, owner_id, data, version, created_at, updated_at) SELECT ?, collection, owner_id, data, version, created_at, updated_at FROM items WHERE id = ?');
    db.transaction(() => ids.forEach((newId) => insert.run(newId, id)))();
    db.close();
  } else {
    await withPg(env.DATABASE_URL, async (client) => {
      if (env.DATABASE_SCHEMA) await client.query(`SET search_path TO "${env.DATABASE_SCHEMA}"`);
      for (let i = 0; i < ids.length; i += 10_000) {
        await client.query(
          'INSERT INTO items (id, collection, owner_id, data, version, created_at, updated_at) SELECT n.id, i.collection, i.owner_id, i.data, i.version, i.created_at, i.updated_at FROM items i, unnest($1::uuid[]) AS n(id) WHERE i.id = $2',
          [ids.slice(i, i + 10_000), id],
        );
      }
      await client.query('ANALYZE items');
    });
  }
  return id;
}

/** Increasing UUIDv7s (RFC 9562 §5.7): the millisecond, then a counter, then random bits. */
function uuidV7Sequence() {
  const ms = BigInt(Date.now());
  let counter = 0;
  return () => {
    const bytes = randomBytes(16);
    const stamp = ms + BigInt(counter >> 12);
    for (let i = 0; i < 6; i++) bytes[i] = Number((stamp >> BigInt(8 * (5 - i))) & 0xffn);
    bytes[6] = 0x70 | ((counter >> 8) & 0x0f);
    bytes[7] = counter & 0xff;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    counter++;
    const hex = bytes.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  };
}

async function withPg(url, work) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
