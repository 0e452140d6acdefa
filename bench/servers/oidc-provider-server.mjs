/**
 * node-oidc-provider (npm `oidc-provider`, 9.x) configured to do the same work as Latchkey in the
 * benchmark: one confidential client (and its RS256 twin for scenario h, and a private_key_jwt
 * client for scenario j when BENCH_CLIENT_JWKS gives its keys), PKCE (S256) on the code flow,
 * opaque tokens kept in memory (MapAdapter) or in Redis (OIDC_PROVIDER_STORE below), refresh
 * tokens rotated on every use, introspection and client_credentials enabled, consent remembered
 * across authorizations of one session, and DPoP with server nonces required (as Latchkey's default).
 *
 * Run as its own process: `PORT=4000 node bench/servers/oidc-provider-server.mjs`. It listens on
 * 127.0.0.1:PORT and prints `ready` on stdout once it does. The provider's one-time notices about
 * defaults also go to stdout, so a reader must look for the `ready` line, not the first line.
 *
 * Where it keeps its records, OIDC_PROVIDER_STORE (or `--store=`) says:
 * - `memory` (the default): the MapAdapter below, in this process;
 * - `redis`: Redis at REDIS_URL (redis://127.0.0.1:6379), through the adapter laid out as
 *   oidc-provider's Redis example (oidc-provider-redis-adapter.mjs), every key under
 *   OIDC_PROVIDER_REDIS_PREFIX (a random `bench:oidc:…:` when unset); the keys under the prefix
 *   are deleted when the server stops (SIGTERM or SIGINT). Start-up fails when Redis does not answer.
 *
 * How much it holds (issue 47): BENCH_CLIENTS client_secret_basic clients (1 by default; ids from
 * clientIdAt, one shared secret, static clients, which oidc-provider instantiates on first use),
 * BENCH_JWT_CLIENTS private_key_jwt clients sharing the BENCH_CLIENT_JWKS key (1), BENCH_PEOPLE
 * people who can sign in (personIdAt, the bench password). With BENCH_PREFILL_SECRET set, POST
 * /bench/prefill creates access tokens and refresh-token families (oidc-provider-prefill.mjs).
 */
import { generateKeyPairSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import Provider from 'oidc-provider';
import { CLIENT_SECRET, clientIdAt, jwtClientIdAt, PASSWORD, personIdAt, PREFILL_PATH, USERNAME } from './oidc-provider-bench-data.mjs';
import { prefillHandler } from './oidc-provider-prefill.mjs';
import { connectRedisAdapter, DEFAULT_REDIS_URL, deleteKeys, randomPrefix } from './oidc-provider-redis-adapter.mjs';

const port = Number(process.env.PORT);
if (!Number.isInteger(port) || port <= 0) {
  console.error('PORT must be set to the port to listen on');
  process.exit(2);
}
const issuer = `http://127.0.0.1:${port}`;
const store = process.argv.find((arg) => arg.startsWith('--store='))?.slice('--store='.length) ?? process.env.OIDC_PROVIDER_STORE ?? 'memory';
if (store !== 'memory' && store !== 'redis') {
  console.error(`OIDC_PROVIDER_STORE must be memory or redis, not ${store}`);
  process.exit(2);
}

// How many clients, private_key_jwt clients and people (issue 47); 1 each unless given.
function countFromEnv(name) {
  const value = Number(process.env[name] ?? 1);
  if (!Number.isInteger(value) || value < 1) {
    console.error(`${name} must be a whole number ≥ 1, not ${process.env[name]}`);
    process.exit(2);
  }
  return value;
}
const CLIENT_COUNT = countFromEnv('BENCH_CLIENTS');
const JWT_CLIENT_COUNT = countFromEnv('BENCH_JWT_CLIENTS');
const PEOPLE = countFromEnv('BENCH_PEOPLE');
// The bench user and client; the target module (bench/targets/oidc-provider.mjs) uses the same
// values (oidc-provider-bench-data.mjs). The password is compared as a constant on purpose: the
// password hash's cost is not part of this comparison.
const CLIENT = {
  client_id: clientIdAt(0),
  client_secret: CLIENT_SECRET,
  token_endpoint_auth_method: 'client_secret_basic',
  grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
  response_types: ['code'],
  redirect_uris: ['http://127.0.0.1/cb'],
  scope: 'openid offline_access api:read',
  // Latchkey's scenario e asks for no ID token, oidc-provider issues one on every code exchange and
  // refresh with the openid scope (which userinfo needs). EdDSA keeps that unavoidable extra work
  // small; RS256, the OIDC default, costs about a millisecond of CPU per token.
  id_token_signed_response_alg: 'EdDSA',
};
// Scenario h (OpenID code flows): the same client with RS256, the OIDC default and Latchkey's.
const RS256_CLIENT = { ...CLIENT, client_id: 'bench-client-rs256', id_token_signed_response_alg: 'RS256' };
// Scenario j (client_credentials with private_key_jwt, RFC 7523): a client that authenticates with
// ES256 assertions of the key whose public JWK Set the target passes in BENCH_CLIENT_JWKS. As with
// Latchkey's, client_credentials only, the signing algorithm pinned. oidc-provider accepts an aud of
// its issuer (what the benchmark sends, the one value Latchkey accepts), its token endpoint URL or
// the endpoint's own URL, and records each jti once (ReplayDetection, in the store) until exp.
const JWT_CLIENT = process.env.BENCH_CLIENT_JWKS
  ? {
      client_id: jwtClientIdAt(0),
      token_endpoint_auth_method: 'private_key_jwt',
      token_endpoint_auth_signing_alg: 'ES256',
      jwks: JSON.parse(process.env.BENCH_CLIENT_JWKS),
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      scope: 'api:read',
    }
  : undefined;
// The realistic preset's clients: as CLIENT and JWT_CLIENT, told apart by their ids only.
const clients = [
  ...Array.from({ length: CLIENT_COUNT }, (_, k) => ({ ...CLIENT, client_id: clientIdAt(k) })),
  RS256_CLIENT,
  ...(JWT_CLIENT ? Array.from({ length: JWT_CLIENT_COUNT }, (_, k) => ({ ...JWT_CLIENT, client_id: jwtClientIdAt(k) })) : []),
];

/** Signing keys are made at start-up: nothing outlives the process, and no dev keystore warning. */
function signingKeys() {
  const jwk = (pair, alg) => ({ ...pair.privateKey.export({ format: 'jwk' }), alg, use: 'sig' });
  return {
    keys: [
      jwk(generateKeyPairSync('ed25519'), 'EdDSA'),
      // Kept for clients that ask for the OIDC default algorithm.
      jwk(generateKeyPairSync('rsa', { modulusLength: 2048 }), 'RS256'),
    ],
  };
}

const DAY = 24 * 60 * 60;

/**
 * An in-memory adapter that keeps what it is given until it expires. oidc-provider's built-in
 * one is an LRU of about 1,000 entries: under load the session, its grant and the scenarios'
 * access token are evicted within a second (every authorization then asks for a login, every
 * read gets 401), and its grant index is rebuilt on each write, which grows quadratically once
 * thousands of tokens share one grant. This one has the shape of a production adapter (one
 * record per artifact, a set of artifacts per grant, a session index by uid) without a network
 * hop, so it is the cheapest storage oidc-provider can have.
 */
const records = new Map(); // `${model}:${id}` → { payload, expiresAt }
const grantMembers = new Map(); // grantId → Set of record keys
const sessionsByUid = new Map(); // session uid → session id
const byUserCode = new Map(); // device flow user code → id (unused here, part of the interface)
const GRANTABLE = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest', 'PreAuthorizedCode']);
// As the built-in adapter: an artifact outlives its expiry by the clock tolerance (oidc-provider's
// default `clockTolerance`, 15 s; not configured here). The Redis adapter keeps the same.
const CLOCK_TOLERANCE_SECONDS = 15;
const CLOCK_TOLERANCE_MS = CLOCK_TOLERANCE_SECONDS * 1000;

function forget(key, payload) {
  records.delete(key);
  const id = key.slice(key.indexOf(':') + 1);
  if (payload.uid && sessionsByUid.get(payload.uid) === id) sessionsByUid.delete(payload.uid);
  if (payload.userCode) byUserCode.delete(payload.userCode);
  if (payload.grantId) grantMembers.get(payload.grantId)?.delete(key);
}

class MapAdapter {
  constructor(model) {
    this.model = model;
  }

  key(id) {
    return `${this.model}:${id}`;
  }

  async upsert(id, payload, expiresIn) {
    const key = this.key(id);
    const expiresAt = typeof expiresIn === 'number' ? Date.now() + expiresIn * 1000 + CLOCK_TOLERANCE_MS : Infinity;
    records.set(key, { payload, expiresAt });
    if (this.model === 'Session') sessionsByUid.set(payload.uid, id);
    if (payload.userCode) byUserCode.set(payload.userCode, id);
    if (payload.grantId && GRANTABLE.has(this.model)) {
      let members = grantMembers.get(payload.grantId);
      if (!members) grantMembers.set(payload.grantId, (members = new Set()));
      members.add(key);
    }
  }

  async find(id) {
    const key = this.key(id);
    const record = records.get(key);
    if (!record) return undefined;
    if (record.expiresAt <= Date.now()) {
      forget(key, record.payload);
      return undefined;
    }
    return record.payload;
  }

  async findByUid(uid) {
    const id = sessionsByUid.get(uid);
    return id === undefined ? undefined : this.find(id);
  }

  async findByUserCode(userCode) {
    const id = byUserCode.get(userCode);
    return id === undefined ? undefined : this.find(id);
  }

  async consume(id) {
    const record = records.get(this.key(id));
    if (record) record.payload.consumed = Math.floor(Date.now() / 1000);
  }

  async destroy(id) {
    const key = this.key(id);
    const record = records.get(key);
    if (record) forget(key, record.payload);
  }

  async revokeByGrantId(grantId) {
    for (const key of grantMembers.get(grantId) ?? []) {
      const record = records.get(key);
      if (record) forget(key, record.payload);
    }
    grantMembers.delete(grantId);
  }
}

// ReplayDetection (each DPoP proof's and client assertion's jti) needs nothing of its own here:
// oidc-provider calls find(), then upsert() when nothing was found, and with a Map no other request
// runs between the two, so a jti is accepted once until it expires. The Redis adapter makes that
// pair atomic with a claim in find() (see there).

/** The adapter class for the store, and what to do when the server stops. */
async function openStore() {
  if (store === 'memory') {
    // Expired records are also dropped in the background, as a store with TTLs would.
    const sweep = setInterval(() => {
      const now = Date.now();
      for (const [key, record] of records) if (record.expiresAt <= now) forget(key, record.payload);
    }, 60_000);
    sweep.unref();
    return { adapter: MapAdapter, close: async () => clearInterval(sweep) };
  }
  const url = process.env.REDIS_URL || DEFAULT_REDIS_URL;
  const prefix = process.env.OIDC_PROVIDER_REDIS_PREFIX || randomPrefix();
  const redis = await connectRedisAdapter({ url, prefix, clockToleranceSeconds: CLOCK_TOLERANCE_SECONDS });
  console.log(`store: redis ${url.replace(/\/\/[^@/]*@/, '//')}, keys under ${prefix}`);
  return {
    adapter: redis.Adapter,
    async close() {
      await redis.close();
      const deleted = await deleteKeys({ url, prefix });
      console.log(`store: deleted ${deleted} keys under ${prefix}`);
    },
  };
}

const storage = await openStore();

const provider = new Provider(issuer, {
  adapter: storage.adapter,
  clients,
  jwks: signingKeys(),
  cookies: { keys: [randomBytes(32).toString('base64url')] },

  // `api:read` is the client_credentials scope. Without a resource indicator (the default
  // resource is none) the token carries the requested scope as is, which is all the benchmark's
  // request needs; no resource server has to be configured.
  scopes: ['openid', 'offline_access', 'api:read'],

  // Only the code flow, as Latchkey: no implicit or hybrid response types in the metadata.
  responseTypes: ['code'],

  // oidc-provider only requires PKCE for public clients by default; Latchkey requires it always.
  pkce: { required: () => true },

  features: {
    // Our own interaction below replaces the development login/consent pages.
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    userinfo: { enabled: true },
    // RFC 9449, as Latchkey has it by default: a proof binds the token at the token endpoint, and
    // every proof must carry a nonce the server handed out (DPoP-Nonce). On in 9.x already; the
    // nonces need a secret. Each proof's jti is recorded once (ReplayDetection, in the store).
    dPoP: { enabled: true, nonceSecret: randomBytes(32), requireNonce: () => true },
  },

  ttl: {
    AccessToken: 3600,
    ClientCredentials: 3600,
    RefreshToken: 30 * DAY,
    AuthorizationCode: 600,
    IdToken: 3600,
    Interaction: 600,
    Session: 14 * DAY,
    Grant: 30 * DAY,
  },

  // Every refresh rotates its token, as Latchkey does (the default rotates only late in its life).
  rotateRefreshToken: true,

  // Latchkey returns a refresh token from every code exchange of a client allowed the
  // refresh_token grant. oidc-provider's default asks for the offline_access scope, which it
  // keeps only with prompt=consent, i.e. an interaction on every authorization; this rule makes
  // a consent-remembered authorization return a refresh token too. Refresh tokens without
  // offline_access end with the session, which lasts far longer than a benchmark run.
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),

  // A logged-in session reuses the grant its earlier consent created, so the consent prompt only
  // appears for scopes not granted yet. (This is oidc-provider's default policy, spelled out here
  // because the benchmark's "consent remembered" scenario depends on it.)
  async loadExistingGrant(ctx) {
    const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
  },

  async findAccount(ctx, sub) {
    return { accountId: sub, claims: async () => ({ sub }) };
  },

  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
});

/** The urlencoded body of a small form post. */
async function readForm(req) {
  let text = '';
  req.setEncoding('utf8');
  for await (const chunk of req) {
    text += chunk;
    if (text.length > 4096) throw new Error('form too large');
  }
  return new URLSearchParams(text);
}

function sameString(a, b) {
  const left = Buffer.from(String(a));
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function send(res, status, body, type = 'text/plain; charset=utf-8') {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(body);
}

/** The account a login names: the bench user, or one of the BENCH_PEOPLE people (person-<k>). */
function knownLogin(login) {
  if (sameString(login, USERNAME)) return USERNAME;
  const k = /^person-(\d{1,9})$/.exec(login)?.[1];
  return k !== undefined && Number(k) < PEOPLE && login === personIdAt(Number(k)) ? login : undefined;
}

/**
 * GET /interaction/:uid shows a sign-in form; POST /interaction/:uid with `login` and `password`
 * signs the bench user in (when the interaction asks for a login) and grants every scope the
 * authorization asked for, then sends the browser back to the authorization endpoint. This stands
 * in for a login page plus a consent page, with none of their rendering.
 */
async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { uid, prompt, params, session, grantId } = details;

  if (req.method === 'GET') {
    send(
      res,
      200,
      `<form method="post" action="/interaction/${uid}"><input name="login"><input name="password" type="password"><button>Sign in and allow</button></form>`,
      'text/html; charset=utf-8',
    );
    return;
  }
  if (req.method !== 'POST') return send(res, 405, 'method not allowed');

  const form = await readForm(req);
  let accountId = session?.accountId;
  if (prompt.name === 'login' || !accountId) {
    accountId = knownLogin(form.get('login') ?? '');
    if (!accountId || !sameString(form.get('password') ?? '', PASSWORD)) return send(res, 401, 'invalid credentials');
  }

  // Login and consent are finished together: the authorization resumes with both satisfied.
  const grant = grantId ? await provider.Grant.find(grantId) : new provider.Grant({ accountId, clientId: params.client_id });
  if (params.scope) grant.addOIDCScope(params.scope);
  for (const [indicator, scopes] of Object.entries(prompt.details.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  const result = { login: { accountId }, consent: { grantId: await grant.save() } };
  await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
}

const providerCallback = provider.callback();
const prefill = process.env.BENCH_PREFILL_SECRET ? prefillHandler(provider, { secret: process.env.BENCH_PREFILL_SECRET, clients: CLIENT_COUNT, people: PEOPLE }) : undefined;

const server = createServer((req, res) => {
  if (prefill && req.url === PREFILL_PATH) {
    prefill(req, res).catch((error) => {
      console.error('prefill', error);
      if (!res.headersSent) send(res, 500, error.message);
      else res.destroy();
    });
    return;
  }
  if (req.url.startsWith('/interaction/')) {
    interaction(req, res).catch((error) => {
      // An unknown or expired interaction (its cookie is missing) is the client's fault.
      const status = error.statusCode ?? error.status ?? 500;
      if (status >= 500) console.error(error);
      if (!res.headersSent) send(res, status, error.error_description ?? error.message);
      else res.destroy();
    });
    return;
  }
  providerCallback(req, res);
});

// oidc-provider reports errors it turned into responses (4xx and 5xx) as events; only a server
// error is worth a line in the log, and logging the expected 4xx would cost per request.
provider.on('server_error', (ctx, error) => console.error('server_error', error));

server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => {
  console.log(`ready (${clients.length} clients)`);
});

let stopping = false;
function shutdown() {
  if (stopping) return;
  stopping = true;
  server.close(() => {
    storage.close().then(
      () => process.exit(0),
      (error) => {
        console.error('closing the store:', error);
        process.exit(1);
      },
    );
  });
  server.closeAllConnections();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
