import type { OnApplicationShutdown } from '@nestjs/common';

/** Injection token of the LoginAttemptStore: Redis when configured, else this instance's memory. */
export const LOGIN_ATTEMPT_STORE = Symbol('LOGIN_ATTEMPT_STORE');

/** A failure counter and how many failures it allows before each further attempt must wait. */
export interface AttemptCounter {
  key: string;
  freeFailures: number;
}

export interface AttemptPolicy {
  maxDelayMs: number;
  /** A counter is forgotten this long after its last failure's wait ends. */
  windowMs: number;
}

/**
 * Failed sign-in counters with waits that double (1 s, 2 s, 4 s … up to maxDelayMs) once a counter
 * reaches its free failures. Times are the application's Clock (epoch ms), passed in.
 */
export interface LoginAttemptStore {
  /**
   * If any counter is still waiting, the ms left and nothing is counted. Otherwise each counter
   * counts one failure in advance, so that concurrent attempts see the wait at once, and 0.
   */
  begin(counters: AttemptCounter[], policy: AttemptPolicy, now: number): Promise<number>;
  /** The attempt succeeded: take back its advance failure (lifting a wait it alone caused). */
  forgive(counter: AttemptCounter, now: number): Promise<void>;
  /** Forget a counter altogether. */
  clear(key: string): Promise<void>;
}

/** The wait after `failures` failures: none before the free ones are used up, then doubling. */
export function waitAfter(failures: number, freeFailures: number, maxDelayMs: number): number {
  return failures < freeFailures ? 0 : Math.min(1000 * 2 ** (failures - freeFailures), maxDelayMs);
}

interface Counter {
  failures: number;
  lockedUntil: number;
  expiresAt: number;
}

const SWEEP_INTERVAL_MS = 60_000;

/** The store without Redis: one instance's memory, swept of expired counters once a minute. */
export class MemoryLoginAttemptStore implements LoginAttemptStore, OnApplicationShutdown {
  private readonly counters = new Map<string, Counter>();
  private readonly sweep = setInterval(() => this.sweepExpired(Date.now()), SWEEP_INTERVAL_MS).unref();

  async begin(counters: AttemptCounter[], policy: AttemptPolicy, now: number): Promise<number> {
    const wait = Math.max(0, ...counters.map(({ key }) => (this.live(key, now)?.lockedUntil ?? 0) - now));
    if (wait > 0) return wait;
    for (const { key, freeFailures } of counters) {
      const failures = (this.live(key, now)?.failures ?? 0) + 1;
      const delay = waitAfter(failures, freeFailures, policy.maxDelayMs);
      // Below the free failures, no lock at all (0), not one "until now": a call that reads a
      // slightly earlier clock (another instance's) would otherwise wait a millisecond, rounded to a second.
      const lockedUntil = delay > 0 ? now + delay : 0;
      this.counters.set(key, { failures, lockedUntil, expiresAt: now + delay + policy.windowMs });
    }
    return 0;
  }

  async forgive({ key, freeFailures }: AttemptCounter, now: number): Promise<void> {
    const counter = this.live(key, now);
    if (!counter) return;
    counter.failures -= 1;
    if (counter.failures < freeFailures) counter.lockedUntil = 0;
    if (counter.failures <= 0) this.counters.delete(key);
  }

  async clear(key: string): Promise<void> {
    this.counters.delete(key);
  }

  onApplicationShutdown(): void {
    clearInterval(this.sweep);
    this.counters.clear();
  }

  private live(key: string, now: number): Counter | undefined {
    const counter = this.counters.get(key);
    if (counter && counter.expiresAt <= now) this.counters.delete(key);
    return counter && counter.expiresAt > now ? counter : undefined;
  }

  private sweepExpired(now: number): void {
    for (const key of this.counters.keys()) this.live(key, now);
  }
}
