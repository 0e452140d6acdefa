import { registerAs, type ConfigType } from '@nestjs/config';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { validateEnv } from './validate-env.js';

class OAuthEnv {
  /** RFC 6749 §4.1.2: a maximum authorization code lifetime of 10 minutes is RECOMMENDED; we never exceed it. */
  @IsOptional() @IsInt() @Min(10) @Max(600)
  CODE_TTL_SECONDS?: number;

  @IsOptional() @IsInt() @Min(60) @Max(24 * 3600)
  ACCESS_TOKEN_TTL_SECONDS?: number;

  @IsOptional() @IsInt() @Min(300) @Max(365 * 24 * 3600)
  REFRESH_TOKEN_TTL_SECONDS?: number;

  /**
   * How long a rotated refresh token presented again by its client answers the same successor pair
   * instead of revoking its family (RefreshRepeats); 0 turns the grace off (RFC 9700 §4.14.2 as
   * written). At most a minute: the window is a thief's window too.
   */
  @IsOptional() @IsInt() @Min(0) @Max(60)
  REFRESH_REUSE_GRACE_SECONDS?: number;
}

export const oauthConfig = registerAs('oauth', () => {
  const env = validateEnv(OAuthEnv, process.env);
  return {
    codeTtlSeconds: env.CODE_TTL_SECONDS ?? 600,
    accessTokenTtlSeconds: env.ACCESS_TOKEN_TTL_SECONDS ?? 3600,
    refreshTokenTtlSeconds: env.REFRESH_TOKEN_TTL_SECONDS ?? 30 * 24 * 3600,
    refreshReuseGraceSeconds: env.REFRESH_REUSE_GRACE_SECONDS ?? 10,
  };
});

export type OAuthConfig = ConfigType<typeof oauthConfig>;
