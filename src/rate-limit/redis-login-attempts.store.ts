import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { defineLuaScript, type LuaScript } from '../redis/lua-script.js';
import { MemoryLoginAttemptStore, type AttemptCounter, type AttemptPolicy, type LoginAttemptStore } from './login-attempts.store.js';
import { RedisFallback } from './redis-fallback.js';

/** Drops a counter hash whose expiresAt (application clock) has passed; Redis's own expiry is the backstop. */
const EXPIRE = `
local function live(key, now)
  local expiresAt = tonumber(redis.call('HGET', key, 'expiresAt') or '0')
  if expiresAt > 0 and expiresAt <= now then redis.call('DEL', key) end
end
`;

/** MemoryLoginAttemptStore.begin, atomically. ARGV: now, maxDelayMs, windowMs, then each key's free failures. */
const BEGIN = `${EXPIRE}
local now, maxDelay, window = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local wait = 0
for _, key in ipairs(KEYS) do
  live(key, now)
  wait = math.max(wait, tonumber(redis.call('HGET', key, 'lockedUntil') or '0') - now)
end
if wait > 0 then return wait end
for i, key in ipairs(KEYS) do
  local failures = redis.call('HINCRBY', key, 'failures', 1)
  local free = tonumber(ARGV[3 + i])
  local delay = 0
  if failures >= free then delay = math.min(1000 * 2 ^ (failures - free), maxDelay) end
  -- No lock below the free failures (0, not now: an instance whose clock is a little behind would wait).
  local lockedUntil = 0
  if delay > 0 then lockedUntil = now + delay end
  redis.call('HSET', key, 'lockedUntil', string.format('%d', lockedUntil), 'expiresAt', string.format('%d', now + delay + window))
  redis.call('PEXPIRE', key, math.floor(delay + window))
end
return 0
`;

/** MemoryLoginAttemptStore.forgive, atomically. ARGV: now, free failures. */
const FORGIVE = `${EXPIRE}
live(KEYS[1], tonumber(ARGV[1]))
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local failures = redis.call('HINCRBY', KEYS[1], 'failures', -1)
if failures < tonumber(ARGV[2]) then redis.call('HSET', KEYS[1], 'lockedUntil', '0') end
if failures <= 0 then redis.call('DEL', KEYS[1]) end
return 0
`;

/** Failed sign-in counters shared by every instance: one hash per counter under `<prefix>`. */
export class RedisLoginAttemptStore implements LoginAttemptStore, OnApplicationShutdown {
  private readonly beginScript: LuaScript;
  private readonly forgiveScript: LuaScript;
  private readonly local = new MemoryLoginAttemptStore();
  private readonly fallback = new RedisFallback(new Logger(RedisLoginAttemptStore.name), 'failed sign-ins');

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    this.beginScript = defineLuaScript(redis, 'latchkeyLoginBegin', BEGIN);
    this.forgiveScript = defineLuaScript(redis, 'latchkeyLoginForgive', FORGIVE);
  }

  begin(counters: AttemptCounter[], policy: AttemptPolicy, now: number): Promise<number> {
    const keys = counters.map(({ key }) => this.prefix + key);
    return this.fallback.run(
      async () => Number(await this.beginScript(keys, [now, policy.maxDelayMs, policy.windowMs, ...counters.map((c) => c.freeFailures)])),
      () => this.local.begin(counters, policy, now),
    );
  }

  forgive(counter: AttemptCounter, now: number): Promise<void> {
    return this.fallback.run(
      async () => void (await this.forgiveScript([this.prefix + counter.key], [now, counter.freeFailures])),
      () => this.local.forgive(counter, now),
    );
  }

  clear(key: string): Promise<void> {
    return this.fallback.run(
      async () => void (await this.redis.del(this.prefix + key)),
      () => this.local.clear(key),
    );
  }

  onApplicationShutdown(): void {
    this.local.onApplicationShutdown();
  }
}
