/**
 * Latchkey's data for a realistic cardinality (issue 47; bench/lib/cardinality.mjs), written
 * straight into its database before any timing: thousands of clients, a hundred thousand people
 * with a note each, hundreds of thousands of live access tokens, refresh-token families and
 * signed-in browser sessions. Going through the API would take hours and measure nothing.
 *
 * Every row is a copy of a template row Latchkey itself wrote (through the CLI or the API), with
 * only the columns that must differ replaced: ids, hashes, owners, expiry. So the rows have exactly
 * the form Latchkey writes, and a column added later is copied along without a change here. Secret
 * values are made as Latchkey makes them (src/common/secrets.ts: a prefix and 256 random bits,
 * stored as their SHA-256 in hex), kept here in memory to be presented.
 *
 * SQLite: one transaction of prepared INSERT … SELECT per row (better-sqlite3). PostgreSQL: one
 * INSERT … SELECT FROM unnest(…) per 10,000 rows, then ANALYZE.
 *
 * Browser sessions: a sessions row (the SHA-256 of the cookie's secret, as SessionsService.start
 * writes it) and the cookie itself, sealed with the target's SESSION_SECRET by
 * @fastify/secure-session, the plugin Latchkey uses, with the key Latchkey derives from it
 * (src/app.setup.ts sessionKeys) and the fields LoginSession.logIn sets.
 */
import { createHash, hkdfSync, randomBytes, randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import secureSession from '@fastify/secure-session';
import pg from 'pg';

const CHUNK = 10_000;

/** A Latchkey secret (src/common/secrets.ts generateSecret) and its stored hash (hashSecret). */
export function newSecret(prefix) {
  const value = prefix + randomBytes(32).toString('base64url');
  return { value, hash: createHash('sha256').update(value, 'utf8').digest('hex') };
}

/** A client_id as src/clients/client-information.ts newClientId makes them. */
export function newClientId() {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (/^[A-Za-z0-9]/.test(id)) return id;
  }
}

/** Increasing UUIDv7s (RFC 9562 §5.7): the millisecond, then a counter, then random bits. */
export function uuidV7Sequence() {
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

/**
 * The target's database, for copies of template rows: `copy(table, key, keyValue, overrides)`
 * inserts one row per index of the override arrays (column → values), every other column taken
 * from the row whose `key` column is `keyValue`. `date(d)` is a timestamp as the dialect stores it.
 */
export async function openDatabase(env) {
  if (env.DATABASE_URL.startsWith('sqlite:')) {
    const db = new Database(env.DATABASE_URL.slice('sqlite:'.length));
    db.pragma('busy_timeout = 10000');
    const columnsOf = (table) => db.prepare(`PRAGMA table_info("${table}")`).all().map((c) => c.name);
    return {
      // As src/database/prepared-statement.ts toSqliteDate writes them.
      date: (d) => d.toISOString().replace('T', ' ').replace('Z', ''),
      get: (sql, ...params) => db.prepare(sql.replace(/\$\d+/g, '?')).get(...params),
      async copy(table, key, keyValue, overrides) {
        const { names, others, count } = shape(columnsOf(table), overrides);
        if (count === 0) return;
        const insert = db.prepare(`INSERT INTO "${table}" (${quote([...names, ...others])}) SELECT ${names.map(() => '?').join(', ')}${others.length ? `, ${quote(others)}` : ''} FROM "${table}" WHERE "${key}" = ?`);
        const values = names.map((name) => overrides[name]);
        db.transaction(() => {
          for (let i = 0; i < count; i++) insert.run(...values.map((column) => column[i]), keyValue);
        })();
      },
      async analyze() {
        db.exec('ANALYZE');
      },
      async close() {
        db.close();
      },
    };
  }
  const client = new pg.Client({ connectionString: env.DATABASE_URL });
  await client.connect();
  if (env.DATABASE_SCHEMA) await client.query(`SET search_path TO "${env.DATABASE_SCHEMA}"`);
  const typesOf = async (table) =>
    new Map((await client.query('SELECT column_name, udt_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1', [table])).rows.map((r) => [r.column_name, r.udt_name]));
  return {
    date: (d) => d.toISOString(),
    get: async (sql, ...params) => (await client.query(sql, params)).rows[0],
    async copy(table, key, keyValue, overrides) {
      const types = await typesOf(table);
      const { names, others, count } = shape([...types.keys()], overrides);
      const arrays = names.map((name, i) => `$${i + 1}::${types.get(name)}[]`).join(', ');
      const sql = `INSERT INTO "${table}" (${quote([...names, ...others])}) SELECT ${names.map((name) => `n."${name}"`).join(', ')}${others.length ? `, ${others.map((o) => `t."${o}"`).join(', ')}` : ''} FROM "${table}" t, unnest(${arrays}) AS n(${quote(names)}) WHERE t."${key}" = $${names.length + 1}`;
      for (let i = 0; i < count; i += CHUNK) await client.query(sql, [...names.map((name) => overrides[name].slice(i, i + CHUNK)), keyValue]);
    },
    async analyze() {
      // The tables written here only: a bare ANALYZE would go through every schema of the database.
      await client.query('ANALYZE users, items, clients, tokens, sessions, consents');
    },
    async close() {
      await client.end();
    },
  };
}

function shape(columns, overrides) {
  const names = Object.keys(overrides);
  for (const name of names) if (!columns.includes(name)) throw new Error(`prefill: no column ${name}`);
  const count = names.length ? overrides[names[0]].length : 0;
  return { names, others: columns.filter((c) => !names.includes(c)), count };
}

const quote = (names) => names.map((n) => `"${n}"`).join(', ');

/** `n` values from `make(k)` for k = from … from + n − 1. */
function series(from, n, make) {
  return Array.from({ length: Math.max(0, n) }, (_, i) => make(from + i));
}

/**
 * People 1 … people − 1 (person 0 is the template, already there), each a copy of the template
 * user with a username of its own (and the same password hash: nobody signs in as them), and a
 * note of their own, a copy of the template note. Returns the notes' ids, person 0's first.
 */
export async function prefillPeople(db, { templateUserId, templateItemId, people }) {
  const nextId = uuidV7Sequence();
  const userIds = series(1, people - 1, () => nextId());
  await db.copy('users', 'id', templateUserId, { id: userIds, username: series(1, people - 1, (k) => `bench-p${k}`) });
  const itemIds = userIds.map(() => nextId());
  await db.copy('items', 'id', templateItemId, { id: itemIds, owner_id: userIds });
  return { userIds: [templateUserId, ...userIds], itemIds: [templateItemId, ...itemIds] };
}

/** Confidential clients 1 … clients − 1, copies of the template client, each with a secret of its own. */
export async function prefillClients(db, { templateClientId, clients, secretPrefix = 'lk_cs_' }) {
  const ids = series(1, clients - 1, () => newClientId());
  const secrets = ids.map(() => newSecret(secretPrefix));
  await db.copy('clients', 'id', templateClientId, { id: ids, secret_hash: secrets.map((s) => s.hash) });
  return ids.map((id, i) => ({ clientId: id, clientSecret: secrets[i].value }));
}

/** Copies of a client that has no secret (private_key_jwt: they share its registered keys). */
export async function prefillKeyClients(db, { templateClientId, clients }) {
  const ids = series(1, clients - 1, () => newClientId());
  await db.copy('clients', 'id', templateClientId, { id: ids });
  return ids;
}

/**
 * Tokens `from` … `to` − 1, copies of the template token row (its kind, client, scope, binding),
 * token k owned by person k % people, each in a family of its own, expiring at `expiresAt`.
 * Returns their values.
 */
export async function prefillTokens(db, { templateTokenHash, from, to, ownerOf, expiresAt, prefix }) {
  const nextId = uuidV7Sequence();
  const n = to - from;
  if (n <= 0) return [];
  const secrets = series(from, n, () => newSecret(prefix));
  const when = db.date(expiresAt);
  await db.copy('tokens', 'token_hash', templateTokenHash, {
    id: series(0, n, () => nextId()),
    token_hash: secrets.map((s) => s.hash),
    family_id: series(0, n, () => nextId()),
    user_id: series(from, n, ownerOf),
    expires_at: series(0, n, () => when),
  });
  return secrets.map((s) => s.value);
}

/**
 * Signed-in browsers 1 … sessions − 1: a sessions row each (copied from the template's), the
 * person's consent for the template consent's client (its scope included), and the cookie.
 * Returns the cookies' values.
 */
export async function prefillSessions(db, { templateSessionId, templateConsentId, sessionSecret, ttlSeconds, sessions, ownerOf }) {
  const n = sessions - 1;
  if (n <= 0) return [];
  const createdAt = new Date(Math.floor(Date.now() / 1000) * 1000);
  const secrets = series(1, n, () => newSecret('lk_ss_'));
  const owners = series(1, n, ownerOf);
  await db.copy('sessions', 'id', templateSessionId, {
    id: secrets.map((s) => s.hash),
    // Unique per session (the admin API names sessions by it, issue 48): not the template's.
    public_id: series(0, n, () => randomUUID()),
    user_id: owners,
    created_at: series(0, n, () => db.date(createdAt)),
    expires_at: series(0, n, () => db.date(new Date(createdAt.getTime() + ttlSeconds * 1000))),
  });
  // One consent per person (consents are unique per person and client); the template's person has one.
  const { user_id: templatePerson } = await db.get('SELECT user_id FROM consents WHERE id = $1', templateConsentId);
  const people = [...new Set(owners)].filter((id) => id !== templatePerson);
  const nextId = uuidV7Sequence();
  await db.copy('consents', 'id', templateConsentId, { id: people.map(() => nextId()), user_id: people });
  const sealer = await cookieSealer(sessionSecret, ttlSeconds);
  const authTime = Math.floor(createdAt.getTime() / 1000);
  return secrets.map((secret, i) =>
    sealer({ uid: owners[i], authTime, signedInAt: createdAt.getTime(), sid: secret.value, amr: ['pwd'], csrf: randomBytes(32).toString('base64url') }),
  );
}

/** Seals session data into a latchkey_session cookie value as the server does (app.setup.ts). */
async function cookieSealer(sessionSecret, ttlSeconds) {
  const app = Fastify();
  await app.register(secureSession, { key: Buffer.from(hkdfSync('sha256', sessionSecret, 'latchkey', 'session-cookie-key', 32)), cookieName: 'latchkey_session', expiry: ttlSeconds });
  await app.ready();
  // As Set-Cookie carries it (@fastify/cookie serializes with encodeURIComponent): the sealed value holds a ';'.
  const seal = (data) => encodeURIComponent(app.encodeSecureSession(app.createSecureSession(data)));
  await app.close();
  return seal;
}

/** Live tokens of the prefill expire this long after it: well after any run. */
export const TOKEN_LIFETIME_MS = 2 * 24 * 3600 * 1000;
/** Scenario i's DPoP-bound tokens: this many at most (issue 47 asks for the bearer reads' count, not this one's). */
export const MAX_DPOP_TOKENS = 20_000;

/**
 * Everything of the cardinality beyond the template rows `t` (the first client, person, token,
 * DPoP token, refresh token, session and private_key_jwt client, made through the CLI and the
 * API): what the scenarios pick from, index 0 the template's. Families: refreshFamilies (at
 * least one per worker), or none (the refresh scenario then uses tokens from code flows).
 */
export async function prefillLatchkey(env, t, cardinality, workers) {
  const db = await openDatabase(env);
  try {
    const { userIds, itemIds } = await prefillPeople(db, { templateUserId: t.userId, templateItemId: t.itemId, people: cardinality.people });
    const ownerOf = (k) => userIds[k % userIds.length];
    const clients = [t.client, ...(await prefillClients(db, { templateClientId: t.client.clientId, clients: cardinality.clients }))];
    const jwtClientIds = [t.jwtClientId, ...(await prefillKeyClients(db, { templateClientId: t.jwtClientId, clients: Math.min(cardinality.clients, 1_000) }))];
    const expiresAt = new Date(Date.now() + TOKEN_LIFETIME_MS);
    const tokens = [t.accessToken, ...(await prefillTokens(db, { templateTokenHash: hashOf(t.accessToken), from: 1, to: cardinality.accessTokens, ownerOf, expiresAt, prefix: 'lk_at_' }))];
    const dpopCount = Math.min(cardinality.accessTokens, MAX_DPOP_TOKENS);
    const dpopTokens = [t.dpopToken, ...(await prefillTokens(db, { templateTokenHash: hashOf(t.dpopToken), from: 1, to: dpopCount, ownerOf, expiresAt, prefix: 'lk_at_' }))];
    const families = cardinality.refreshFamilies > 0 ? Math.max(cardinality.refreshFamilies, workers) : 0;
    const refreshTokens = families > 0 ? [t.refreshToken, ...(await prefillTokens(db, { templateTokenHash: hashOf(t.refreshToken), from: 1, to: families, ownerOf, expiresAt, prefix: 'lk_rt_' }))] : [];
    const sessionOwner = (k) => userIds[k % userIds.length];
    const cookies = await prefillSessions(db, { templateSessionId: t.sessionId, templateConsentId: t.consentId, sessionSecret: env.SESSION_SECRET, ttlSeconds: t.sessionTtlSeconds, sessions: cardinality.sessions, ownerOf: sessionOwner });
    await db.analyze();
    return { userIds, itemIds, clients, jwtClientIds, tokens, dpopTokens, refreshTokens, cookies, ownerOf };
  } finally {
    await db.close();
  }
}

/** More live tokens copied from the template `templateToken`: indexes from … to − 1, owned by person k % people. */
export async function growTokens(env, { templateToken, from, to, people, userIds, prefix = 'lk_at_' }) {
  const db = await openDatabase(env);
  try {
    const values = await prefillTokens(db, { templateTokenHash: hashOf(templateToken), from, to, ownerOf: (k) => userIds[k % people], expiresAt: new Date(Date.now() + TOKEN_LIFETIME_MS), prefix });
    await db.analyze();
    return values;
  } finally {
    await db.close();
  }
}

/** The row id of a secret: its SHA-256 in hex (src/common/secrets.ts hashSecret). */
export function hashOf(value) {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}
