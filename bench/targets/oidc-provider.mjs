/**
 * node-oidc-provider as the comparison point: bench/servers/oidc-provider-server.mjs, one process,
 * on its in-memory store (`oidcProvider()`, named oidc-provider) or on Redis
 * (`oidcProvider({ name: 'oidc-provider-redis', store: 'redis' })`, the adapter laid out as
 * oidc-provider's Redis example, keys under a prefix of the run's own, deleted when it stops).
 * The scenarios are the ones it shares with Latchkey, under its own names (bench/run.mjs maps
 * them to our letters): a userinfo read, a client_credentials token, a refresh
 * with rotation, a complete authorization-code flow in a logged-in session with consent remembered,
 * the same flow with a nonce and an RS256-signed ID token (a client of its own), an introspection,
 * the userinfo read with a DPoP-bound token and a proof per request, and a client_credentials token
 * for a private_key_jwt client with an assertion per request (its ES256 key is made here and its
 * public half handed to the server at start). Sessions are set up over HTTP, as a browser and a
 * client would.
 *
 * How much data (issue 47, bench/lib/cardinality.mjs): with the "one" preset, one client, one user,
 * one session per flow and one token, as before. Otherwise the server starts with
 * `cardinality.clients` client_secret_basic clients (one shared secret: the secret's check is the
 * same whichever it is) and min(clients, 1,000) private_key_jwt clients sharing one key, and
 * prepare() fills it, outside any timing: `accessTokens` live access tokens (plus a pool of
 * min(accessTokens, 20,000) DPoP-bound ones) and `refreshFamilies` refresh-token families, made
 * inside the server through oidc-provider's own models (bench/servers/oidc-provider-prefill.mjs),
 * and `sessions` browsers signed in as people person-<k> with consent given, for each of the two
 * flow clients. The requests then pick a token, a client, a family or a session per request.
 * The prefilled access tokens are bound to no session, as the "one" preset's read token (the "one"
 * preset's DPoP token comes from a flow without offline_access, so its reads also look up the
 * session). The Redis peer also has grow(), for run.mjs's token curve.
 */
import { createHash, randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertionKey } from '../lib/client-assertion.mjs';
import { dpopKey, dpopTokenRequest } from '../lib/dpop.mjs';
import { basicAuth, CookieJar, expectIdToken, expectStatus, FORM, request } from '../lib/http.mjs';
import { picker, readCardinality } from '../lib/cardinality.mjs';
import { startServer } from '../lib/processes.mjs';
import { CLIENT_SECRET, clientIdAt, jwtClientIdAt, PASSWORD, personIdAt, PREFILL_PATH, PREFILL_SECRET_HEADER, USERNAME } from '../servers/oidc-provider-bench-data.mjs';
import { DEFAULT_REDIS_URL, deleteKeys, randomPrefix } from '../servers/oidc-provider-redis-adapter.mjs';
import { inParallel } from '../lib/in-parallel.mjs';

// The same values as in the server.
const CLIENT_ID = clientIdAt(0);
// The openIdFlow scenario's client: the same, with ID tokens signed with RS256 instead of EdDSA.
const RS256_CLIENT_ID = 'bench-client-rs256';
const REDIRECT_URI = 'http://127.0.0.1/cb';
// At most this many private_key_jwt clients and DPoP-bound tokens, whatever the cardinality.
const MAX_JWT_CLIENTS = 1_000;
const MAX_DPOP_TOKENS = 20_000;
// Records per prefill request, requests in flight, browsers signing in at once.
const PREFILL_BATCH = 10_000;
const PREFILL_IN_FLIGHT = 2;
const SIGN_INS_IN_FLIGHT = 16;
// What the flow asks for. openid is needed for userinfo; offline_access is left out because
// oidc-provider only honours it with prompt=consent, which would make every authorization an
// interaction. The server issues a refresh token on every code exchange regardless, as Latchkey does.
const FLOW_SCOPE = 'openid';
// What a first, consenting authorization asks for: refresh tokens that outlive the session.
const OFFLINE_SCOPE = 'openid offline_access';
const API_SCOPE = 'api:read';

const AUTHORIZATION = basicAuth(CLIENT_ID, CLIENT_SECRET);

function tokenRequest(form, clientId = CLIENT_ID) {
  return {
    method: 'POST',
    path: '/token',
    headers: { authorization: clientId === CLIENT_ID ? AUTHORIZATION : basicAuth(clientId, CLIENT_SECRET), 'content-type': FORM },
    body: new URLSearchParams(form).toString(),
  };
}

function pkcePair() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

function authorizePath({ scope, challenge, state, prompt, nonce, clientId = CLIENT_ID }) {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    scope,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  if (prompt) query.set('prompt', prompt);
  if (nonce) query.set('nonce', nonce);
  return `/auth?${query}`;
}

/** The code from a redirect to the client, after checking it is one and carries our state. */
function codeFrom(response, state, what) {
  expectStatus(response, [302, 303], what);
  const location = new URL(response.headers.location, REDIRECT_URI);
  if (`${location.origin}${location.pathname}` !== REDIRECT_URI) throw new Error(`${what}: redirected to ${response.headers.location}`);
  const code = location.searchParams.get('code');
  if (!code || location.searchParams.get('state') !== state) throw new Error(`${what}: no code in ${response.headers.location}`);
  return code;
}

/** With a DPoP key, the code is redeemed with a proof of it (and the server's nonce): the access token is bound to the key. */
async function exchangeCode(baseUrl, code, verifier, clientId = CLIENT_ID, dpop = undefined) {
  const exchange = tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier }, clientId);
  const response = dpop ? await dpopTokenRequest(baseUrl, dpop, exchange) : await request(baseUrl, exchange);
  return JSON.parse(expectStatus(response, 200, 'code exchange').body);
}

/**
 * A new browser: authorize with offline_access and prompt=consent → the interaction (the sign-in
 * form, posted with the bench user's password; it grants the requested scopes too) → back to the
 * authorization endpoint → the client's redirect with a code → the code exchange. Returns the
 * browser's cookies and the token response.
 */
async function signInAndConsent(baseUrl, clientId = CLIENT_ID, login = USERNAME) {
  const jar = new CookieJar();
  const { verifier, challenge } = pkcePair();
  const state = randomBytes(8).toString('hex');
  let response = jar.store(await request(baseUrl, { path: authorizePath({ scope: OFFLINE_SCOPE, challenge, state, prompt: 'consent', clientId }) }));
  expectStatus(response, [302, 303], 'authorize (first)');
  const interaction = new URL(response.headers.location, baseUrl).pathname;
  if (!interaction.startsWith('/interaction/')) throw new Error(`authorize (first): expected an interaction, got ${response.headers.location}`);

  const form = new URLSearchParams({ login, password: PASSWORD }).toString();
  response = jar.store(await request(baseUrl, { method: 'POST', path: interaction, headers: { cookie: jar.header(), 'content-type': FORM }, body: form }));
  expectStatus(response, 303, 'sign-in and consent');

  // Resuming the authorization sets the session cookie and redirects to the client.
  response = jar.store(await request(baseUrl, { path: new URL(response.headers.location, baseUrl).pathname, headers: { cookie: jar.header() } }));
  const tokens = await exchangeCode(baseUrl, codeFrom(response, state, 'authorize (resumed)'), verifier, clientId);
  return { jar, tokens };
}

/** Only the session's cookies (and their signatures): what a later authorization needs. */
function sessionCookie(jar) {
  const cookies = [...jar.cookies].filter(([name]) => name === '_session' || name === '_session.sig');
  if (cookies.length === 0) throw new Error('no session cookie after sign-in');
  return cookies.map(([name, value]) => `${name}=${value}`).join('; ');
}

/** The JWK thumbprint (RFC 7638) of a dpopKey()'s public key: what a DPoP-bound token keeps as jkt (RFC 9449 §6). */
function jwkThumbprint(key) {
  const { crv, kty, x, y } = JSON.parse(Buffer.from(key.header, 'base64url').toString('utf8')).jwk;
  return createHash('sha256').update(JSON.stringify({ crv, kty, x, y })).digest('base64url');
}

/**
 * `count` records of `kind` from index `from` on, made inside the server through oidc-provider's
 * models (bench/servers/oidc-provider-prefill.mjs), in batches; their values (and, for refresh
 * families, the client each belongs to).
 */
async function prefill(baseUrl, secret, { kind, from = 0, count, jkt }) {
  const batches = Math.ceil(count / PREFILL_BATCH);
  const answers = await inParallel(batches, PREFILL_IN_FLIGHT, async (b) => {
    const body = JSON.stringify({ kind, from: from + b * PREFILL_BATCH, count: Math.min(PREFILL_BATCH, count - b * PREFILL_BATCH), jkt });
    const response = await request(baseUrl, { method: 'POST', path: PREFILL_PATH, headers: { [PREFILL_SECRET_HEADER]: secret, 'content-type': 'application/json' }, body });
    return JSON.parse(expectStatus(response, 200, `prefill ${kind}`).body);
  });
  return { values: answers.flatMap((answer) => answer.values), clientIds: answers.flatMap((answer) => answer.clientIds ?? []) };
}

/** A full GC in the server once a prefill is over: its RSS in the results is then what it keeps, not the prefill's garbage. */
async function settle(baseUrl, secret) {
  const response = await request(baseUrl, { method: 'POST', path: PREFILL_PATH, headers: { [PREFILL_SECRET_HEADER]: secret, 'content-type': 'application/json' }, body: '{"kind":"settle"}' });
  return JSON.parse(expectStatus(response, 200, 'prefill settle').body);
}

/** `count` browsers signed in with consent given to `clientId`, `login(j)` the j-th one's account, a few at a time. */
function signInMany(baseUrl, clientId, count, login) {
  return inParallel(count, SIGN_INS_IN_FLIGHT, async (j) => {
    const { jar, tokens } = await signInAndConsent(baseUrl, clientId, login(j));
    return { cookie: sessionCookie(jar), tokens };
  });
}

const seconds = (since) => Math.round((performance.now() - since) / 100) / 10;

/**
 * The target: `store` is `memory` (records in the server process) or `redis` (Redis at `redisUrl`,
 * REDIS_URL or redis://127.0.0.1:6379; every key under a prefix of this run's, deleted when the
 * server stops, by the server and again here should it have been killed).
 */
export function oidcProvider({ name = 'oidc-provider', store = 'memory', redisUrl = process.env.REDIS_URL || DEFAULT_REDIS_URL } = {}) {
  /** Per running server (by base URL): its prefill secret, what it was started with, its RSS. */
  const servers = new Map();

  /**
   * The token curve (issue 47: run.mjs's BENCH_TOKEN_CURVE; offered by the Redis peer only): the
   * reads and introspections pick among the first `level` live access tokens, dpopRead among
   * min(level, 20,000) DPoP-bound ones, tokens (made as in prepare) added where there are fewer.
   * Tokens beyond `level` stay in the store, unpicked: at level 1 every pick is the first token.
   * Returns the seconds spent adding tokens.
   */
  async function grow(ctx, level) {
    const { secret } = servers.get(ctx.baseUrl);
    const since = performance.now();
    let added = 0;
    if (level > ctx.accessTokens.length) {
      const { values } = await prefill(ctx.baseUrl, secret, { kind: 'AccessToken', from: ctx.prefilledAccessTokens, count: level - ctx.accessTokens.length });
      for (const value of values) ctx.accessTokens.push(value);
      ctx.prefilledAccessTokens += values.length;
      added += values.length;
    }
    const dpopLevel = Math.min(level, MAX_DPOP_TOKENS);
    if (dpopLevel > ctx.dpop.accessTokens.length) {
      const count = dpopLevel - ctx.dpop.accessTokens.length;
      const { values } = await prefill(ctx.baseUrl, secret, { kind: 'AccessToken', from: ctx.dpop.accessTokens.length, count, jkt: jwkThumbprint(ctx.dpop.key) });
      for (const value of values) ctx.dpop.accessTokens.push(value);
      added += values.length;
    }
    ctx.pickAccessToken = picker(Math.min(level, ctx.accessTokens.length), ctx.cardinality);
    ctx.dpop.pick = picker(Math.min(dpopLevel, ctx.dpop.accessTokens.length), ctx.cardinality);
    const took = (performance.now() - since) / 1000;
    if (added > 0) {
      const memory = await settle(ctx.baseUrl, secret);
      console.log(`${name}: ${added.toLocaleString('en')} access tokens added in ${took.toFixed(1)} s; RSS after a GC ${memory.after.rssMb} MB`);
    }
    return took;
  }

  const target = {
    name,
    store,

    /**
     * The server pinned to `cpu` (when not null), with the clients and people of `cardinality`
     * (BENCH_CARDINALITY and the rest when not given); ready once it answers its discovery document.
     */
    async start({ port, cpu, logFile = join(tmpdir(), `${name}-bench-${port}.log`), cardinality = readCardinality() }) {
      const baseUrl = `http://127.0.0.1:${port}`;
      // The private_key_jwt clients' key: made here, its public JWK Set passed to the server.
      const jwtClientKey = assertionKey();
      const counts = { clients: cardinality.clients, jwtClients: Math.min(cardinality.clients, MAX_JWT_CLIENTS), people: cardinality.people };
      const secret = randomBytes(24).toString('base64url');
      const env = {
        PORT: String(port),
        NODE_ENV: 'production',
        BENCH_CLIENT_JWKS: JSON.stringify(jwtClientKey.jwks),
        OIDC_PROVIDER_STORE: store,
        BENCH_CLIENTS: String(counts.clients),
        BENCH_JWT_CLIENTS: String(counts.jwtClients),
        BENCH_PEOPLE: String(counts.people),
        BENCH_PREFILL_SECRET: secret,
      };
      const prefix = store === 'redis' ? randomPrefix() : undefined;
      if (prefix) Object.assign(env, { REDIS_URL: redisUrl, OIDC_PROVIDER_REDIS_PREFIX: prefix });
      const cleanUp = async () => {
        if (prefix) await deleteKeys({ url: redisUrl, prefix });
      };
      let server;
      try {
        server = await startServer({
          name,
          command: process.execPath,
          args: ['bench/servers/oidc-provider-server.mjs'],
          env,
          cpu,
          // The server prints `ready` once listening; answering a request through the provider is the
          // stronger check, and the one the other targets use.
          readyUrl: `${baseUrl}/.well-known/openid-configuration`,
          logFile,
        });
      } catch (error) {
        await cleanUp().catch(() => {});
        throw error;
      }
      servers.set(baseUrl, { secret, counts, cardinality, jwtClientKey, rssMb: server.rssMb });
      return {
        ...server,
        baseUrl,
        async stop() {
          servers.delete(baseUrl);
          try {
            await server.stop();
          } finally {
            await cleanUp();
          }
        },
      };
    },

    /**
     * The "one" preset, as before issue 47: one signed-in session with consent given (its cookie and
     * a user access token), another for the RS256 client, and `refresh` (or `workers`) refresh
     * tokens, each from a browser session of its own (oidc-provider revokes a whole grant when a
     * rotated refresh token is reused, so tokens sharing one grant would not be independent).
     * Otherwise `cardinality.sessions` sessions per flow client, and access tokens, DPoP-bound
     * tokens and refresh families (each a grant of its own) prefilled in the server. The time each
     * took is in `ctx.prefill` and printed.
     */
    async prepare(baseUrl, { refresh, workers, cardinality } = {}) {
      const server = servers.get(baseUrl);
      if (!server) throw new Error(`${name}: no server of this target at ${baseUrl}`);
      const c = cardinality ?? server.cardinality;
      if (c.clients > server.counts.clients || c.people > server.counts.people) throw new Error(`${name}: started with ${server.counts.clients} clients and ${server.counts.people} people, asked for ${c.clients} and ${c.people}`);
      const realistic = c.preset !== 'one';
      const workerCount = workers ?? refresh ?? 64;
      const started = performance.now();
      const timings = {};

      // Sessions: person-<k> signs in with the bench password (the "one" preset: the bench user).
      let since = performance.now();
      const login = realistic ? (j) => personIdAt(j % c.people) : () => USERNAME;
      const [sessions, openIdSessions] = await Promise.all([signInMany(baseUrl, CLIENT_ID, c.sessions, login), signInMany(baseUrl, RS256_CLIENT_ID, c.sessions, login)]);
      timings.sessions = seconds(since);

      // Refresh families; worker w owns those with index % workerCount === w.
      since = performance.now();
      let families;
      if (realistic && c.refreshFamilies > 0) {
        const { values, clientIds } = await prefill(baseUrl, server.secret, { kind: 'RefreshToken', count: Math.max(c.refreshFamilies, workerCount) });
        families = { tokens: values, clientIds };
      } else {
        const signedIn = await signInMany(baseUrl, CLIENT_ID, refresh ?? workerCount, () => USERNAME);
        families = { tokens: signedIn.map(({ tokens }) => tokens.refresh_token), clientIds: signedIn.map(() => CLIENT_ID) };
      }
      if (families.tokens.some((token) => !token)) throw new Error('the code exchange returned no refresh token');
      timings.refreshFamilies = seconds(since);

      since = performance.now();
      const accessTokens = realistic ? (await prefill(baseUrl, server.secret, { kind: 'AccessToken', count: c.accessTokens })).values : [sessions[0].tokens.access_token];
      timings.accessTokens = seconds(since);

      // dpopRead: access tokens bound to one ES256 key. The "one" preset: one, from an
      // authorization in the main session (consent remembered) redeemed with a DPoP proof.
      since = performance.now();
      const dpop = dpopKey();
      let dpopTokens;
      if (realistic) {
        dpopTokens = (await prefill(baseUrl, server.secret, { kind: 'AccessToken', count: Math.min(c.accessTokens, MAX_DPOP_TOKENS), jkt: jwkThumbprint(dpop) })).values;
      } else {
        const { verifier, challenge } = pkcePair();
        const state = randomBytes(8).toString('hex');
        const authorized = await request(baseUrl, { path: authorizePath({ scope: FLOW_SCOPE, challenge, state }), headers: { cookie: sessions[0].cookie } });
        const exchanged = await exchangeCode(baseUrl, codeFrom(authorized, state, 'authorize (DPoP)'), verifier, CLIENT_ID, dpop);
        if (exchanged.token_type?.toLowerCase() !== 'dpop') throw new Error(`code exchange with a DPoP proof: token_type ${exchanged.token_type}, expected DPoP`);
        dpopTokens = [exchanged.access_token];
      }
      timings.dpopTokens = seconds(since);
      timings.total = seconds(started);

      // privateKeyJwtClientCredentials: the assertions' aud is the issuer as discovery states it.
      const { issuer } = JSON.parse(expectStatus(await request(baseUrl, { path: '/.well-known/openid-configuration' }), 200, 'discovery').body);
      const jwtClientIds = Array.from({ length: Math.min(c.clients, server.counts.jwtClients) }, (_, k) => jwtClientIdAt(k));
      const memory = realistic ? await settle(baseUrl, server.secret) : undefined;
      const prefillRssMb = Math.round(server.rssMb());
      console.log(
        `${name}: prefilled in ${timings.total} s (sessions ${timings.sessions} s, refresh families ${timings.refreshFamilies} s, access tokens ${timings.accessTokens} s, DPoP tokens ${timings.dpopTokens} s); RSS ${memory ? `${memory.before.rssMb} MB, after a GC ` : ''}${prefillRssMb} MB${memory ? ` (heap ${memory.before.heapUsedMb} → ${memory.after.heapUsedMb} MB)` : ''}`,
      );
      return {
        baseUrl,
        cardinality: c,
        prefill: { seconds: timings, rssMb: prefillRssMb },
        prefillSeconds: timings.total,
        cookies: sessions.map((session) => session.cookie),
        openIdCookies: openIdSessions.map((session) => session.cookie),
        pickSession: picker(c.sessions, c),
        accessTokens,
        // Tokens made through the prefill route so far (grow() goes on from there).
        prefilledAccessTokens: realistic ? accessTokens.length : 0,
        pickAccessToken: picker(accessTokens.length, c),
        clientAuthorizations: Array.from({ length: c.clients }, (_, k) => (k === 0 ? AUTHORIZATION : basicAuth(clientIdAt(k), CLIENT_SECRET))),
        pickClient: picker(c.clients, c),
        refresh: { ...families, workers: workerCount },
        dpop: { key: dpop, accessTokens: dpopTokens, pick: picker(dpopTokens.length, c) },
        jwtClient: { clientIds: jwtClientIds, pick: picker(jwtClientIds.length, c), audience: issuer, key: server.jwtClientKey },
      };
    },

    scenarios: {
      /** A token picked per request once there are several (picked at call time, so grow() applies). */
      read: (ctx) => ({
        method: 'GET',
        path: '/me',
        headers: { authorization: `Bearer ${ctx.accessTokens[0]}` },
        ...(ctx.accessTokens.length > 1 && { next: () => ({ headers: { authorization: `Bearer ${ctx.accessTokens[ctx.pickAccessToken()]}` } }) }),
      }),

      /** read with a DPoP-bound token: `Authorization: DPoP`, and a proof per request (bench/lib/dpop.mjs). */
      dpopRead: (ctx) => ({
        path: '/me',
        accessToken: ctx.dpop.accessTokens[0],
        key: ctx.dpop.key,
        ...(ctx.dpop.accessTokens.length > 1 && { next: () => ({ accessToken: ctx.dpop.accessTokens[ctx.dpop.pick()] }) }),
      }),

      /** A client picked per request (each with its own Basic credentials) once there are several. */
      clientCredentials: (ctx) => ({
        method: 'POST',
        path: '/token',
        headers: { authorization: AUTHORIZATION, 'content-type': FORM },
        body: `grant_type=client_credentials&scope=${encodeURIComponent(API_SCOPE)}`,
        ...(ctx.clientAuthorizations.length > 1 && { next: () => ({ headers: { authorization: ctx.clientAuthorizations[ctx.pickClient()] } }) }),
      }),

      /** clientCredentials for a private_key_jwt client: a fresh assertion per request (bench/lib/client-assertion.mjs). */
      privateKeyJwtClientCredentials: (ctx) => {
        const { clientIds, pick, audience, key } = ctx.jwtClient;
        return {
          path: '/token',
          form: `grant_type=client_credentials&scope=${encodeURIComponent(API_SCOPE)}`,
          clientId: clientIds[0],
          audience,
          key,
          ...(clientIds.length > 1 && { nextClientId: () => clientIds[pick()] }),
        };
      },

      /** A calling client and a token picked per request, independently (any confidential client may introspect any token). */
      introspect: (ctx) => ({
        method: 'POST',
        path: '/token/introspection',
        headers: { authorization: AUTHORIZATION, 'content-type': FORM },
        body: `token=${ctx.accessTokens[0]}`,
        ...((ctx.accessTokens.length > 1 || ctx.clientAuthorizations.length > 1) && {
          next: () => ({ headers: { authorization: ctx.clientAuthorizations[ctx.pickClient()] }, body: `token=${ctx.accessTokens[ctx.pickAccessToken()]}` }),
        }),
      }),

      /**
       * One refresh of a family this worker owns (index % workers === worker: never two workers on
       * one family), picked per step; the rotated token replaces the family's.
       */
      refresh: (ctx, worker) => {
        const { tokens, clientIds, workers } = ctx.refresh;
        if (worker >= workers || worker >= tokens.length) throw new Error(`only ${Math.min(workers, tokens.length)} refresh workers prepared, not ${worker + 1}`);
        const owned = [];
        for (let family = worker; family < tokens.length; family += workers) owned.push(family);
        const pick = picker(owned.length, ctx.cardinality);
        return async () => {
          const family = owned[pick()];
          const response = await request(ctx.baseUrl, tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens[family] }, clientIds[family]));
          const { refresh_token: rotated } = JSON.parse(expectStatus(response, 200, 'refresh').body);
          if (!rotated || rotated === tokens[family]) throw new Error('refresh: the token was not rotated');
          tokens[family] = rotated;
        };
      },

      /** Authorize in a signed-in session picked per flow (no interaction: consent is remembered) → code → tokens → userinfo. */
      flow: (ctx) => async () => {
        const { verifier, challenge } = pkcePair();
        const state = randomBytes(8).toString('hex');
        const cookie = ctx.cookies[ctx.pickSession()];
        const authorized = await request(ctx.baseUrl, { path: authorizePath({ scope: FLOW_SCOPE, challenge, state }), headers: { cookie } });
        const tokens = await exchangeCode(ctx.baseUrl, codeFrom(authorized, state, 'authorize'), verifier);
        const userinfo = await request(ctx.baseUrl, { path: '/me', headers: { authorization: `Bearer ${tokens.access_token}` } });
        expectStatus(userinfo, 200, 'userinfo');
      },

      /** As flow, with a nonce, for the RS256 client: every token response must carry its ID token. */
      openIdFlow: (ctx) => async () => {
        const { verifier, challenge } = pkcePair();
        const state = randomBytes(8).toString('hex');
        const nonce = randomBytes(8).toString('hex');
        const cookie = ctx.openIdCookies[ctx.pickSession()];
        const authorized = await request(ctx.baseUrl, { path: authorizePath({ scope: FLOW_SCOPE, challenge, state, nonce, clientId: RS256_CLIENT_ID }), headers: { cookie } });
        const tokens = await exchangeCode(ctx.baseUrl, codeFrom(authorized, state, 'authorize'), verifier, RS256_CLIENT_ID);
        expectIdToken(tokens, { alg: 'RS256', nonce });
        const userinfo = await request(ctx.baseUrl, { path: '/me', headers: { authorization: `Bearer ${tokens.access_token}` } });
        expectStatus(userinfo, 200, 'userinfo');
      },
    },
  };
  // The curve is the Redis peer's: 1,000,000 tokens in the in-memory one would measure its Map.
  if (store === 'redis') target.grow = grow;
  return target;
}

/** The in-memory peer, as before. */
export default oidcProvider();
