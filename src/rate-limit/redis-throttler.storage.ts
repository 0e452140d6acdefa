import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import type { Redis } from 'ioredis';
import { defineLuaScript, type LuaScript } from '../redis/lua-script.js';
import { MemoryThrottlerStorage, type ThrottlerStorageRecord } from './memory-throttler.storage.js';
import { RedisFallback } from './redis-fallback.js';

/**
 * One hit on a fixed window, atomically. KEYS: the hit counter, the block marker.
 * ARGV: window (ms), limit, block duration (ms; 0 = blocked until the window ends).
 * Returns totalHits, ms until the window ends, blocked (0/1), ms until the block ends.
 * While blocked, hits are not counted; a block ends its window, so counting restarts after it.
 */
const HIT = `
local window, limit, block = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local blockLeft = redis.call('PTTL', KEYS[2])
if blockLeft > 0 then
  return { tonumber(redis.call('GET', KEYS[1]) or '0'), math.max(redis.call('PTTL', KEYS[1]), 0), 1, blockLeft }
end
local hits = redis.call('INCR', KEYS[1])
local left = redis.call('PTTL', KEYS[1])
if left < 0 then
  redis.call('PEXPIRE', KEYS[1], window)
  left = window
end
if hits <= limit then return { hits, left, 0, 0 } end
if block <= 0 then return { hits, left, 1, left } end
redis.call('SET', KEYS[2], '1', 'PX', block)
redis.call('PEXPIRE', KEYS[1], block)
return { hits, block, 1, block }
`;

/**
 * @nestjs/throttler's storage contract on Redis, so that every instance behind the load balancer
 * counts into the same window (the @nest-lab package does not declare Nest 12 support). Keys:
 * `<prefix><throttler>:<key>` and `…:blocked`; both expire by themselves. It would serve
 * ThrottlerModule.forRoot({ storage }) unchanged, once that package loads under Jest (see
 * rate-limit.module.ts).
 */
export class RedisThrottlerStorage implements ThrottlerStorage, OnApplicationShutdown {
  private readonly hit: LuaScript;
  private readonly local = new MemoryThrottlerStorage();
  private readonly fallback = new RedisFallback(new Logger(RedisThrottlerStorage.name), 'request rate limits');

  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    this.hit = defineLuaScript(redis, 'latchkeyThrottleHit', HIT);
  }

  increment(key: string, ttl: number, limit: number, blockDuration: number, throttlerName: string): Promise<ThrottlerStorageRecord> {
    const counter = `${this.prefix}${throttlerName}:${key}`;
    return this.fallback.run(
      async () => {
        const [totalHits, windowLeft, blocked, blockLeft] = (await this.hit([counter, `${counter}:blocked`], [ttl, limit, blockDuration])) as number[];
        return {
          totalHits,
          timeToExpire: Math.ceil(windowLeft / 1000),
          isBlocked: blocked === 1,
          timeToBlockExpire: Math.ceil(blockLeft / 1000),
        };
      },
      () => this.local.increment(key, ttl, limit, blockDuration, throttlerName),
    );
  }

  onApplicationShutdown(): void {
    this.local.onApplicationShutdown();
  }
}
