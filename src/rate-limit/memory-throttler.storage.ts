import type { OnApplicationShutdown } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';

/** Injection token of the request-rate storage: RedisThrottlerStorage, or MemoryThrottlerStorage without Redis. */
export const RATE_LIMIT_STORAGE = Symbol('RATE_LIMIT_STORAGE');

export type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

interface Window {
  hits: number;
  endsAt: number;
  blockedUntil: number;
}

const SWEEP_INTERVAL_MS = 60_000;

/**
 * The rate-limit storage without Redis: this instance's memory, with exactly the semantics of
 * RedisThrottlerStorage's script (a fixed window per key; over the limit, blocked until the window
 * ends, or for blockDuration when one is given, after which counting starts afresh). Used alone
 * when REDIS_URL is unset, and as RedisThrottlerStorage's fallback while Redis is unreachable.
 */
export class MemoryThrottlerStorage implements ThrottlerStorage, OnApplicationShutdown {
  private readonly windows = new Map<string, Window>();
  private readonly sweep = setInterval(() => this.sweepExpired(), SWEEP_INTERVAL_MS).unref();

  async increment(key: string, ttl: number, limit: number, blockDuration: number, throttlerName: string): Promise<ThrottlerStorageRecord> {
    const now = Date.now();
    const id = `${throttlerName}:${key}`;
    let window = this.windows.get(id);
    if (window && window.blockedUntil > now) return record(window, now, true);
    if (!window || window.endsAt <= now) {
      window = { hits: 0, endsAt: now + ttl, blockedUntil: 0 };
      this.windows.set(id, window);
    }
    window.hits += 1;
    if (window.hits <= limit) return record(window, now, false);
    if (blockDuration > 0) {
      window.blockedUntil = now + blockDuration;
      window.endsAt = window.blockedUntil;
    }
    return record(window, now, true);
  }

  onApplicationShutdown(): void {
    clearInterval(this.sweep);
    this.windows.clear();
  }

  private sweepExpired(): void {
    const now = Date.now();
    for (const [id, window] of this.windows) if (window.endsAt <= now && window.blockedUntil <= now) this.windows.delete(id);
  }
}

function record(window: Window, now: number, isBlocked: boolean): ThrottlerStorageRecord {
  const timeToExpire = Math.ceil(Math.max(0, window.endsAt - now) / 1000);
  const blockEndsAt = window.blockedUntil > now ? window.blockedUntil : window.endsAt;
  return { totalHits: window.hits, timeToExpire, isBlocked, timeToBlockExpire: isBlocked ? Math.ceil((blockEndsAt - now) / 1000) : 0 };
}
