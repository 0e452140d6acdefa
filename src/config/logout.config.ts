import { registerAs, type ConfigType } from '@nestjs/config';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { validateEnv } from './validate-env.js';

class LogoutEnv {
  /** How often each instance looks for back-channel logout notifications due; 0 stops this instance from sending any. */
  @IsOptional() @IsInt() @Min(0) @Max(60_000)
  BACKCHANNEL_LOGOUT_POLL_MS?: number;

  /** Attempts per notification before it is recorded as failed. */
  @IsOptional() @IsInt() @Min(1) @Max(20)
  BACKCHANNEL_LOGOUT_MAX_ATTEMPTS?: number;

  /** The first retry's delay; each next one doubles it (capped at an hour). */
  @IsOptional() @IsInt() @Min(1) @Max(3600)
  BACKCHANNEL_LOGOUT_RETRY_SECONDS?: number;

  /** How long a client's back-channel logout endpoint has to answer. */
  @IsOptional() @IsInt() @Min(100) @Max(60_000)
  BACKCHANNEL_LOGOUT_TIMEOUT_MS?: number;
}

/** OpenID Connect Back-Channel Logout 1.0: how notifications are delivered (where they may go: outbound.config.ts). */
export const logoutConfig = registerAs('logout', () => {
  const env = validateEnv(LogoutEnv, process.env);
  return {
    pollMs: env.BACKCHANNEL_LOGOUT_POLL_MS ?? 1000,
    maxAttempts: env.BACKCHANNEL_LOGOUT_MAX_ATTEMPTS ?? 6,
    retrySeconds: env.BACKCHANNEL_LOGOUT_RETRY_SECONDS ?? 5,
    timeoutMs: env.BACKCHANNEL_LOGOUT_TIMEOUT_MS ?? 5000,
    /** A logout token lives this long (Back-Channel Logout §2.4: a short lifetime is RECOMMENDED). */
    tokenTtlSeconds: 120,
  };
});

export type LogoutConfig = ConfigType<typeof logoutConfig>;
