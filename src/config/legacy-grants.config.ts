import { registerAs, type ConfigType } from '@nestjs/config';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { validateEnv } from './validate-env.js';

/**
 * The implicit and password grants (RFC 6749 §4.2, §4.3), which RFC 9700 §2.1.2 and §2.4 advise
 * against. They are off for every client unless an administrator registers it for them; these
 * settings only shape what such a client receives.
 */
class LegacyGrantsEnv {
  /**
   * Lifetime of an access token delivered in the redirect URI's fragment (implicit grant). Short:
   * it has passed through the browser, its history and possibly a referrer (RFC 6749 §10.3, §10.16).
   */
  @IsOptional() @IsInt() @Min(60) @Max(3600)
  IMPLICIT_TOKEN_TTL_SECONDS?: number;

  /** Whether the password grant also returns a refresh token (to clients registered for refresh_token). Default false. */
  @IsOptional() @IsIn(['true', 'false'])
  PASSWORD_GRANT_REFRESH_TOKENS?: string;
}

export const legacyGrantsConfig = registerAs('legacyGrants', () => {
  const env = validateEnv(LegacyGrantsEnv, process.env);
  return {
    implicitTokenTtlSeconds: env.IMPLICIT_TOKEN_TTL_SECONDS ?? 300,
    passwordGrantRefreshTokens: env.PASSWORD_GRANT_REFRESH_TOKENS === 'true',
  };
});

export type LegacyGrantsConfig = ConfigType<typeof legacyGrantsConfig>;
