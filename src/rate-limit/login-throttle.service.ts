import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { rateLimitConfig, type RateLimitConfig } from '../config/rate-limit.config.js';
import { LOGIN_ATTEMPT_STORE, type AttemptCounter, type LoginAttemptStore } from './login-attempts.store.js';
import { rateLimitKey } from './rate-limit-key.js';

/**
 * Brute-force protection of POST /login (RFC 6819 §5.1.4.2.3, OWASP): failures are counted per
 * (address, lower-cased username), so guessing one person's password slows down while that person,
 * elsewhere, still signs in; and per address whatever the username, with a generous allowance,
 * against one password tried on many usernames. Past the free failures, each attempt waits 1 s,
 * 2 s, 4 s … up to LOGIN_MAX_DELAY_SECONDS, and is refused unchecked until then.
 */
@Injectable()
export class LoginThrottle {
  constructor(
    @Inject(LOGIN_ATTEMPT_STORE) private readonly store: LoginAttemptStore,
    @Inject(rateLimitConfig.KEY) private readonly config: RateLimitConfig,
    private readonly clock: Clock,
  ) {}

  /**
   * Before the password is checked: 0 to go ahead, or the seconds to wait. A permitted attempt
   * counts as a failure until `succeeded` says otherwise, so a burst of concurrent attempts cannot
   * slip through before the first failure is recorded.
   */
  async begin(address: string, username: string): Promise<number> {
    const waitMs = await this.store.begin(this.counters(address, username), this.config.login, this.now());
    return Math.ceil(waitMs / 1000);
  }

  /**
   * The password was right: that username's failures from this address are forgotten. The
   * address's counter only takes back this attempt, so signing in to one's own account in between
   * does not reset a stuffing run's count.
   */
  async succeeded(address: string, username: string): Promise<void> {
    const [pair, addressCounter] = this.counters(address, username);
    await Promise.all([this.store.clear(pair.key), this.store.forgive(addressCounter, this.now())]);
  }

  /**
   * Before a second factor (a one-time or recovery code) is checked, after the person's password
   * was: as `begin`, counted per (address, person), and per person whatever the address with twice
   * the free failures, so that a password thief spreading guesses over many addresses still slows
   * down. Only someone who already has the password can make the person wait.
   */
  async beginCode(address: string, userId: string): Promise<number> {
    const waitMs = await this.store.begin(this.codeCounters(address, userId), this.config.login, this.now());
    return Math.ceil(waitMs / 1000);
  }

  /** The code was right: as `succeeded`, for the code counters. */
  async codeSucceeded(address: string, userId: string): Promise<void> {
    const [pair, person] = this.codeCounters(address, userId);
    await Promise.all([this.store.clear(pair.key), this.store.forgive(person, this.now())]);
  }

  /**
   * RFC 8628 §5.1: before a user code typed at the device verification page is looked up. A user
   * code is short enough to be guessed, so wrong ones are counted per address and per sign-in
   * session (the page is only for signed-in people), each with LOGIN_FREE_FAILURES free failures
   * before the same doubling waits as passwords: a guesser who signs in again to get a fresh
   * session still waits for the address, on every instance (the counters live in Redis when set).
   */
  async beginUserCode(address: string, sessionId: string): Promise<number> {
    const waitMs = await this.store.begin(this.userCodeCounters(address, sessionId), this.config.login, this.now());
    return Math.ceil(waitMs / 1000);
  }

  /** The code named a pending request: this attempt was no guess, so it is taken back from both counters. */
  async userCodeFound(address: string, sessionId: string): Promise<void> {
    const now = this.now();
    await Promise.all(this.userCodeCounters(address, sessionId).map((counter) => this.store.forgive(counter, now)));
  }

  private userCodeCounters(address: string, sessionId: string): [AttemptCounter, AttemptCounter] {
    return [
      { key: `user-code-ip:${rateLimitKey(address)}`, freeFailures: this.config.login.freeFailures },
      { key: `user-code-session:${rateLimitKey(sessionId)}`, freeFailures: this.config.login.freeFailures },
    ];
  }

  private codeCounters(address: string, userId: string): [AttemptCounter, AttemptCounter] {
    return [
      { key: `code:${rateLimitKey(address, userId)}`, freeFailures: this.config.login.freeFailures },
      { key: `code-user:${rateLimitKey(userId)}`, freeFailures: 2 * this.config.login.freeFailures },
    ];
  }

  private counters(address: string, username: string): [AttemptCounter, AttemptCounter] {
    return [
      { key: `login:${rateLimitKey(address, username.toLowerCase())}`, freeFailures: this.config.login.freeFailures },
      { key: `login-ip:${rateLimitKey(address)}`, freeFailures: this.config.login.ipFreeFailures },
    ];
  }

  private now(): number {
    return this.clock.now().getTime();
  }
}
