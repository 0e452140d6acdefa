/**
 * Latchkey as production runs it (package.json's `start` command, NODE_ENV=production) on the embedded
 * SQLite default, or on PostgreSQL when a database URL is given. Clients and users are made with
 * the admin CLI, tokens through the real authorization-code flow, and the list scenario's items
 * are inserted straight into the database (110,000 POSTs would take minutes and measure nothing).
 * The rest of the run's cardinality (issue 47: clients, people, tokens, refresh families, browser
 * sessions) is copied from those rows in bulk (latchkey-prefill.mjs), and the scenarios pick from
 * it per request or per flow; with BENCH_CARDINALITY=one there is nothing to copy and every
 * scenario uses one client, one person and one token, as before.
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { picker, readCardinality } from '../lib/cardinality.mjs';
import { assertionKey } from '../lib/client-assertion.mjs';
import { dpopKey, dpopTokenRequest } from '../lib/dpop.mjs';
import { basicAuth, CookieJar, expectIdToken, expectStatus, FORM, request } from '../lib/http.mjs';
import { startServer } from '../lib/processes.mjs';
import { startCommand } from '../lib/start-command.mjs';
import { growTokens, MAX_DPOP_TOKENS, openDatabase, prefillLatchkey, uuidV7Sequence } from './latchkey-prefill.mjs';

const REDIRECT_URI = 'http://127.0.0.1/cb';
const USER_SCOPE = 'notes:read notes:write';
// Scenario h: the same, as an OpenID Connect authentication (an ID token per exchange, RS256 by default).
const OPENID_SCOPE = `openid ${USER_SCOPE}`;
const PASSWORD = 'correct horse battery staple';
/** src/config/session.config.ts cookieName. */
const SESSION_COOKIE = 'latchkey_session';

/**
 * `targetEnv`: settings of this target only, over the ones below (an A/B of settings in one sitting).
 * With DATABASE_POOL_MODE=transaction, which refuses DATABASE_SCHEMA (a transaction pooler drops
 * the search_path), the target gets a database of its own instead of a schema, and listens through
 * the same URL (DATABASE_LISTEN_URL), as a deployment whose DATABASE_URL goes through PgBouncer would.
 */
export function latchkey({ name, databaseUrl, nodeArgs = process.env.BENCH_NODE_ARGS ?? '', targetEnv = {} }) {
  let env;
  let cleanup = () => {};

  const target = {
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
        // Known to the benchmark, which seals the prefilled browsers' cookies with it (latchkey-prefill.mjs),
        // as a deployment sets it (else a key is generated and kept in the database).
        SESSION_SECRET: randomBytes(32).toString('base64url'),
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

    async prepare(baseUrl, { workers, cardinality = readCardinality() }) {
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

      // Issue 47: the rest of the cardinality, copied from the rows above (latchkey-prefill.mjs).
      const prefillStarted = performance.now();
      const templates = await templateRows(env, { credentials, itemId, tokensA, dpopToken: dpopTokens.access_token, jwtClientId: jwtClient.client_id });
      const data = await prefillLatchkey(env, templates, cardinality, workers);
      const prefillSeconds = (performance.now() - prefillStarted) / 1000;

      // Scenario d without prefilled families (BENCH_CARDINALITY=one): a token per worker from code flows, as before issue 47.
      const refreshTokens = data.refreshTokens.length > 0 ? data.refreshTokens : [];
      if (refreshTokens.length === 0) for (let i = 0; i < workers; i++) refreshTokens.push((await codeFlow(baseUrl, credentials, sessionA)).refresh_token);
      const ctx = {
        baseUrl,
        cardinality,
        prefillSeconds,
        credentials,
        accessA: tokensA.access_token,
        accessB: tokensB.access_token,
        // bench/steps.mjs measures each endpoint with bench-a's session and tokens.
        sessionA,
        itemId,
        people: data.userIds.length,
        userIds: data.userIds,
        itemPaths: data.itemIds.map((id) => `/api/v1/notes/${id}`),
        clients: pool(data.clients.map((c) => ({ ...c, authorization: basicAuth(c.clientId, c.clientSecret) })), cardinality),
        tokens: pool(data.tokens, cardinality),
        dpopTokens: pool(data.dpopTokens, cardinality),
        refresh: refreshShares(refreshTokens, workers, cardinality),
        // Browser 0 is bench-a's, signed in above; the others' cookies were sealed by the prefill.
        sessions: pool([{ jar: sessionA, person: 0 }, ...data.cookies.map((cookie, i) => ({ jar: jarWith(cookie), person: (i + 1) % data.userIds.length }))], cardinality),
        dpop: { key: dpop, accessToken: dpopTokens.access_token },
        jwtClient: { audience: issuer, key: jwtKey },
        jwtClients: pool(data.jwtClientIds, cardinality),
        templates,
      };
      return ctx;
    },

    /**
     * Issue 47's token curve: `accessTokens` live bearer tokens (and as many DPoP-bound ones, up
     * to MAX_DPOP_TOKENS), adding what is missing by bulk insert; picks then range over exactly
     * that many (1: one token, as before issue 47). Returns the seconds the inserts took.
     */
    async grow(ctx, accessTokens) {
      const started = performance.now();
      const more = async (tokenPool, template, wanted) => {
        if (wanted > tokenPool.values.length) {
          const added = await growTokens(env, { templateToken: template, from: tokenPool.values.length, to: wanted, people: ctx.people, userIds: ctx.userIds });
          // One by one: spreading 800,000 values into push() overflows the call stack.
          for (const value of added) tokenPool.values.push(value);
        }
        tokenPool.use(wanted);
      };
      await more(ctx.tokens, ctx.templates.accessToken, accessTokens);
      await more(ctx.dpopTokens, ctx.templates.dpopToken, Math.min(accessTokens, MAX_DPOP_TOKENS));
      return (performance.now() - started) / 1000;
    },

    scenarios: {
      // Token k is person k % people's, and reads that person's note.
      a: { kind: 'fixed', request: (ctx) => varying(readOf(ctx, 0), ctx.tokens.count > 1 && (() => readOf(ctx, ctx.tokens.pick()))) },
      b10k: { kind: 'fixed', request: (ctx) => ({ method: 'GET', path: '/api/v1/notes?limit=20', headers: { authorization: `Bearer ${ctx.accessA}` } }) },
      b100k: { kind: 'fixed', request: (ctx) => ({ method: 'GET', path: '/api/v1/notes?limit=20', headers: { authorization: `Bearer ${ctx.accessB}` } }) },
      c: {
        kind: 'fixed',
        request: (ctx) => {
          const headersOf = (client) => ({ authorization: client.authorization, 'content-type': FORM });
          const base = { method: 'POST', path: '/token', headers: headersOf(ctx.clients.values[0]), body: 'grant_type=client_credentials&scope=notes%3Aread' };
          return varying(base, ctx.clients.count > 1 && (() => ({ headers: headersOf(ctx.clients.values[ctx.clients.pick()]) })));
        },
      },
      d: {
        kind: 'steps',
        // Each worker rotates the families it owns only: two workers presenting one family's token at once would be a reuse, and revoke it.
        make: (ctx, worker) => {
          const next = ctx.refresh.pickerOf(worker);
          return async () => {
            const family = next();
            const response = await request(ctx.baseUrl, tokenRequest(ctx.credentials, { grant_type: 'refresh_token', refresh_token: ctx.refresh.tokens[family] }));
            ctx.refresh.tokens[family] = JSON.parse(expectStatus(response, 200, 'refresh').body).refresh_token;
          };
        },
      },
      e: {
        kind: 'steps',
        make: (ctx) => async () => {
          const session = ctx.sessions.values[ctx.sessions.pick()];
          const tokens = await codeFlow(ctx.baseUrl, ctx.credentials, session.jar);
          const read = await request(ctx.baseUrl, { path: ctx.itemPaths[session.person], headers: { authorization: `Bearer ${tokens.access_token}` } });
          expectStatus(read, 200, 'API read');
        },
      },
      f: {
        kind: 'fixed',
        request: (ctx) => {
          const introspect = (client, token) => ({ headers: { authorization: client.authorization, 'content-type': FORM }, body: `token=${token}` });
          const base = { method: 'POST', path: '/introspect', ...introspect(ctx.clients.values[0], ctx.tokens.values[0]) };
          const varies = ctx.clients.count > 1 || ctx.tokens.count > 1;
          return varying(base, varies && (() => introspect(ctx.clients.values[ctx.clients.pick()], ctx.tokens.values[ctx.tokens.pick()])));
        },
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
          const session = ctx.sessions.values[ctx.sessions.pick()];
          const nonce = randomBytes(8).toString('hex');
          const tokens = expectIdToken(await codeFlow(ctx.baseUrl, ctx.credentials, session.jar, false, { scope: OPENID_SCOPE, nonce }), { alg: 'RS256', nonce });
          const read = await request(ctx.baseUrl, { path: ctx.itemPaths[session.person], headers: { authorization: `Bearer ${tokens.access_token}` } });
          expectStatus(read, 200, 'API read');
        },
      },
      // a with a DPoP-bound token: `Authorization: DPoP`, and a proof per request (bench/lib/dpop.mjs); all tokens bound to one key.
      i: {
        kind: 'dpop',
        read: (ctx) => {
          const readOfToken = (k) => ({ path: ctx.itemPaths[k % ctx.people], accessToken: ctx.dpopTokens.values[k] });
          return { ...readOfToken(0), key: ctx.dpop.key, ...(ctx.dpopTokens.count > 1 && { next: () => readOfToken(ctx.dpopTokens.pick()) }) };
        },
      },
      // c for a private_key_jwt client: a fresh client assertion per request (bench/lib/client-assertion.mjs); all clients share one key.
      j: {
        kind: 'assertion',
        token: (ctx) => ({
          path: '/token',
          form: 'grant_type=client_credentials&scope=notes%3Aread',
          clientId: ctx.jwtClients.values[0],
          ...ctx.jwtClient,
          ...(ctx.jwtClients.count > 1 && { nextClientId: () => ctx.jwtClients.values[ctx.jwtClients.pick()] }),
        }),
      },
    },
  };
  // The token curve is asked of Latchkey on PostgreSQL (issue 47); on SQLite it would work alike.
  if (!databaseUrl) delete target.grow;
  return target;
}

/** Scenario a's read with token k: person k % people's note. */
function readOf(ctx, k) {
  return { method: 'GET', path: ctx.itemPaths[k % ctx.people], headers: { authorization: `Bearer ${ctx.tokens.values[k]}` } };
}

/** A fixed request, or (with `next`) one whose path, headers or body run.mjs takes from next() per request. */
function varying(base, next) {
  return next ? { ...base, next } : base;
}

/**
 * Values to pick from (bench/lib/cardinality.mjs picker): the first `count` of them, index 0 the
 * most requested under Zipf. use(n) changes how many (the token curve).
 */
function pool(values, cardinality) {
  const p = {
    values,
    count: 0,
    pick: () => 0,
    use(n) {
      p.count = Math.min(n, values.length);
      p.pick = picker(p.count, cardinality);
    },
  };
  p.use(values.length);
  return p;
}

/** Refresh families shared out: worker w owns families w, w + workers, …, picked within its share. */
function refreshShares(tokens, workers, cardinality) {
  return {
    tokens,
    pickerOf(worker) {
      const owned = Math.floor((tokens.length - 1 - worker) / workers) + 1;
      if (owned < 1) throw new Error(`refresh: worker ${worker} owns no family (${tokens.length} families, ${workers} workers)`);
      const pick = picker(owned, cardinality);
      return () => worker + pick() * workers;
    },
  };
}

function jarWith(cookie) {
  const jar = new CookieJar();
  jar.cookies.set(SESSION_COOKIE, cookie);
  return jar;
}

/**
 * The rows the prefill copies: the template client, person, note, tokens, browser session and
 * consent, as Latchkey wrote them above.
 */
async function templateRows(env, { credentials, itemId, tokensA, dpopToken, jwtClientId }) {
  const db = await openDatabase(env);
  try {
    const { id: userId } = await db.get("SELECT id FROM users WHERE username = 'bench-a'");
    const { id: sessionId } = await db.get('SELECT id FROM sessions WHERE user_id = $1 AND ended_at IS NULL', userId);
    const { id: consentId } = await db.get('SELECT id FROM consents WHERE user_id = $1 AND client_id = $2', userId, credentials.clientId);
    return {
      client: credentials,
      userId,
      itemId,
      accessToken: tokensA.access_token,
      refreshToken: tokensA.refresh_token,
      dpopToken,
      jwtClientId,
      sessionId,
      consentId,
      sessionTtlSeconds: Number(env.SESSION_TTL_SECONDS ?? 8 * 3600),
    };
  } finally {
    await db.close();
  }
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

async function withPg(url, work) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
