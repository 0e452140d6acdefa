import { registerAs, type ConfigType } from '@nestjs/config';
import { IsInt, IsOptional, Matches, Max, Min } from 'class-validator';
import { validateEnv } from './validate-env.js';

class RateLimitEnv {
  /** Requests per minute one client may make to each of /token, /introspect and /revoke; 0 turns the limit off. */
  @IsOptional() @IsInt() @Min(0) @Max(1_000_000)
  RATE_LIMIT_CLIENT_PER_MINUTE?: number;

  /** Requests per minute one access token may make to the data API (/api/v1/…); 0 turns the limit off. */
  @IsOptional() @IsInt() @Min(0) @Max(1_000_000)
  RATE_LIMIT_API_PER_MINUTE?: number;

  /** Failed sign-ins for one username from one address before each further attempt must wait. */
  @IsOptional() @IsInt() @Min(1) @Max(1000)
  LOGIN_FREE_FAILURES?: number;

  /**
   * Failed sign-ins from one address, whatever the username, before each further attempt from it
   * must wait: a generous bound on credential stuffing (one password tried on many usernames),
   * high enough for many people behind one NAT.
   */
  @IsOptional() @IsInt() @Min(1) @Max(1_000_000)
  LOGIN_IP_FREE_FAILURES?: number;

  /** The longest wait after repeated failures; the wait doubles from 1 second up to this. */
  @IsOptional() @IsInt() @Min(1) @Max(24 * 3600)
  LOGIN_MAX_DELAY_SECONDS?: number;

  /** Failures are forgotten this long after the last one (counted from the end of its wait). */
  @IsOptional() @IsInt() @Min(60) @Max(7 * 24 * 3600)
  LOGIN_FAILURE_WINDOW_SECONDS?: number;

  /** Prefix of every Redis key Latchkey writes, so several deployments (or test runs) can share one Redis. */
  @IsOptional() @Matches(/^[\w.:-]{1,64}$/, { message: 'RATE_LIMIT_KEY_PREFIX must be 1 to 64 characters of letters, digits, _ . : -' })
  RATE_LIMIT_KEY_PREFIX?: string;
}

/** Start-up's warning (production) and doctor's when several instances may each count alone. */
export const REDIS_UNSET_WARNING = 'REDIS_URL is not set: rate limits and sign-in waits are counted by each instance on its own';

export const rateLimitConfig = registerAs('rateLimit', () => {
  const env = validateEnv(RateLimitEnv, process.env);
  return {
    clientPerMinute: env.RATE_LIMIT_CLIENT_PER_MINUTE ?? 600,
    apiPerMinute: env.RATE_LIMIT_API_PER_MINUTE ?? 1200,
    login: {
      freeFailures: env.LOGIN_FREE_FAILURES ?? 5,
      ipFreeFailures: env.LOGIN_IP_FREE_FAILURES ?? 100,
      maxDelayMs: (env.LOGIN_MAX_DELAY_SECONDS ?? 900) * 1000,
      windowMs: (env.LOGIN_FAILURE_WINDOW_SECONDS ?? 900) * 1000,
    },
    keyPrefix: env.RATE_LIMIT_KEY_PREFIX ?? 'latchkey:rl:',
  };
});

export type RateLimitConfig = ConfigType<typeof rateLimitConfig>;
