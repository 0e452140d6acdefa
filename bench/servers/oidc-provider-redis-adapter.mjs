/**
 * node-oidc-provider's storage on Redis, for the benchmark's `oidc-provider-redis` peer: an adapter
 * laid out as the Redis example the project documents (example/adapters/redis.js in
 * panva/node-oidc-provider), on ioredis with the example's client options, every key under a
 * per-run prefix that `deleteKeys` removes afterwards.
 *
 * What it keeps where (keys shown without the prefix):
 *
 * - `<Model>:<id>`: the model's payload as JSON (SET … EX ttl), for Session, Grant, Interaction,
 *   ClientCredentials, AccessToken, ReplayDetection and the rest;
 * - `<Model>:<id>` as a hash for the consumable models (AuthorizationCode, RefreshToken,
 *   DeviceCode, BackchannelAuthenticationRequest, PushedAuthorizationRequest, PreAuthorizedCode):
 *   `payload` the JSON, `consumed` the time of consume() (HSET), the hash with the model's TTL;
 * - `grant:<grantId>`: a list of the keys of the grant's tokens and codes (RPUSH), which expires
 *   with its longest-lived member; revokeByGrantId deletes them and the list;
 * - `sessionUid:<uid>` → the Session's id, `userCode:<code>` → the DeviceCode's id, with the TTL of
 *   the record they point to.
 *
 * Each upsert is one MULTI. Where the example reads the grant list's TTL first (a round trip more,
 * and a race between two upserts), this extends it inside the MULTI with EXPIRE NX and EXPIRE GT
 * (Redis 7); on an older server it does as the example does. The example's `uid:<uid>` index is
 * written here for sessions only, as `sessionUid:<uid>` (oidc-provider's MemoryAdapter's name): only
 * Session is looked up by uid.
 *
 * Every TTL is the model's plus the provider's clock tolerance, as the benchmark's in-memory store
 * and oidc-provider's own MemoryAdapter keep records: the two peers differ only in where they keep
 * them.
 *
 * ReplayDetection (the jti of each DPoP proof and client assertion) is used by oidc-provider as
 * `find(id)`, then `upsert(id, …)` when nothing was found (ReplayDetection.unique). In one process
 * with a Map that pair runs without yielding to another request; over a network it does not, and
 * two requests with the same jti could both find nothing and both be accepted. So for this model
 * find() claims the id atomically (SET NX GET, one round trip; a script before Redis 7): the first
 * caller gets nothing (and then writes the record with its TTL, as before), every later one gets
 * the stored record, or the claim, which oidc-provider reads as "seen" either way. A jti is accepted once, across any number
 * of provider processes sharing the Redis. ReplayDetection.find is not called anywhere else.
 */
import { Redis } from 'ioredis';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

// As oidc-provider's MemoryAdapter and the example.
const GRANTABLE = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest', 'PreAuthorizedCode']);
// The example's four, and the two 9.x models that also have consume().
const CONSUMABLE = new Set(['AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest', 'PushedAuthorizationRequest', 'PreAuthorizedCode']);
// How long a ReplayDetection claim holds before its record replaces it (the caller writes it next).
const CLAIM_SECONDS = 60;

const grantKeyFor = (grantId) => `grant:${grantId}`;
const userCodeKeyFor = (userCode) => `userCode:${userCode}`;
const sessionUidKeyFor = (uid) => `sessionUid:${uid}`;

/** A per-run key prefix: `bench:oidc:<random>:`. */
export function randomPrefix() {
  return `bench:oidc:${Math.random().toString(36).slice(2, 10)}${Date.now().toString(36)}:`;
}

/**
 * Connects to `url` and returns { Adapter, client, close() }: Adapter is the class to pass as
 * oidc-provider's `adapter`, close() quits the connection. Fails when Redis does not answer.
 */
export async function connectRedisAdapter({ url = DEFAULT_REDIS_URL, prefix, clockToleranceSeconds = 15 }) {
  if (!prefix) throw new Error('a key prefix is required');
  // The example's client: one connection, the prefix applied by ioredis to every key argument.
  const client = new Redis(url, { keyPrefix: prefix, lazyConnect: true });
  await client.connect();
  const version = /redis_version:(\d+)/.exec(await client.info('server'))?.[1];
  // Redis 7 has EXPIRE NX/GT and SET NX with GET; before it, the grant list's TTL is read first (as
  // the example does) and the claim is a script.
  const redis7 = Number(version) >= 7;
  if (!redis7) {
    client.defineCommand('claimOnce', {
      numberOfKeys: 1,
      lua: "local v = redis.call('GET', KEYS[1]) if v then return v end redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2]) return false",
    });
  }

  const ttlOf = (expiresIn) => (typeof expiresIn === 'number' ? Math.max(1, Math.ceil(expiresIn + clockToleranceSeconds)) : undefined);

  class RedisAdapter {
    constructor(name) {
      this.name = name;
      this.consumable = CONSUMABLE.has(name);
    }

    key(id) {
      return `${this.name}:${id}`;
    }

    async upsert(id, payload, expiresIn) {
      const key = this.key(id);
      const ttl = ttlOf(expiresIn);
      const multi = client.multi();
      if (this.consumable) {
        multi.hset(key, 'payload', JSON.stringify(payload));
        if (ttl) multi.expire(key, ttl);
      } else if (ttl) {
        multi.set(key, JSON.stringify(payload), 'EX', ttl);
      } else {
        multi.set(key, JSON.stringify(payload));
      }

      if (GRANTABLE.has(this.name) && payload.grantId) {
        const grantKey = grantKeyFor(payload.grantId);
        multi.rpush(grantKey, key);
        if (ttl && redis7) {
          // A new list gets the member's TTL, an existing one keeps the longer of the two.
          multi.expire(grantKey, ttl, 'NX');
          multi.expire(grantKey, ttl, 'GT');
        } else if (ttl) {
          const current = await client.ttl(grantKey);
          if (ttl > current) multi.expire(grantKey, ttl);
        }
      }

      if (payload.userCode) {
        const userCodeKey = userCodeKeyFor(payload.userCode);
        if (ttl) multi.set(userCodeKey, id, 'EX', ttl);
        else multi.set(userCodeKey, id);
      }

      if (this.name === 'Session' && payload.uid) {
        const uidKey = sessionUidKeyFor(payload.uid);
        if (ttl) multi.set(uidKey, id, 'EX', ttl);
        else multi.set(uidKey, id);
      }

      await exec(multi);
    }

    async find(id) {
      if (this.name === 'ReplayDetection') return claim(this.key(id));
      if (this.consumable) {
        const { payload, consumed } = await client.hgetall(this.key(id));
        // A hash without its payload is a consume() that came after the record expired or was deleted.
        if (payload === undefined) return undefined;
        return { ...(consumed === undefined ? undefined : { consumed: Number(consumed) }), ...JSON.parse(payload) };
      }
      const data = await client.get(this.key(id));
      return data === null ? undefined : JSON.parse(data);
    }

    async findByUid(uid) {
      const id = await client.get(sessionUidKeyFor(uid));
      return id === null ? undefined : this.find(id);
    }

    async findByUserCode(userCode) {
      const id = await client.get(userCodeKeyFor(userCode));
      return id === null ? undefined : this.find(id);
    }

    async consume(id) {
      await client.hset(this.key(id), 'consumed', Math.floor(Date.now() / 1000));
    }

    async destroy(id) {
      await client.del(this.key(id));
    }

    async revokeByGrantId(grantId) {
      const grantKey = grantKeyFor(grantId);
      const keys = await client.lrange(grantKey, 0, -1);
      const multi = client.multi();
      for (const key of keys) multi.del(key);
      multi.del(grantKey);
      await exec(multi);
    }
  }

  /** ReplayDetection's find: undefined to the first caller for this key, the record (or `{}`, the claim) to every other. */
  async function claim(key) {
    const previous = redis7 ? await client.set(key, '{}', 'EX', CLAIM_SECONDS, 'NX', 'GET') : await client.claimOnce(key, '{}', CLAIM_SECONDS);
    return previous === null ? undefined : JSON.parse(previous);
  }

  return {
    Adapter: RedisAdapter,
    client,
    async close() {
      await client.quit();
    },
  };
}

/** MULTI's EXEC reports a failed command in its results, not as a rejection. */
async function exec(multi) {
  const results = await multi.exec();
  for (const [error] of results ?? []) if (error) throw error;
}

/**
 * Deletes every key under `prefix` (SCAN MATCH, UNLINK in batches) with a connection of its own.
 * Returns how many it deleted.
 */
export async function deleteKeys({ url = DEFAULT_REDIS_URL, prefix }) {
  if (!prefix || !prefix.startsWith('bench:')) throw new Error(`refusing to delete keys under ${JSON.stringify(prefix)}`);
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  let deleted = 0;
  try {
    await client.connect();
    const match = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', match, 'COUNT', 1000);
      if (keys.length) deleted += await client.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
  return deleted;
}

/** Whether Redis at `url` answers a PING within `timeoutMs`; the error's message when it does not. */
export async function redisAnswers(url = DEFAULT_REDIS_URL, timeoutMs = 1000) {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: timeoutMs, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  let lastError;
  client.on('error', (error) => {
    lastError = error;
  });
  try {
    await client.connect();
    return (await client.ping()) === 'PONG' ? { ok: true } : { ok: false, reason: 'no PONG' };
  } catch (error) {
    return { ok: false, reason: (lastError ?? error).message };
  } finally {
    client.disconnect();
  }
}
