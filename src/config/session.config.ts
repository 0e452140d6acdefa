import { registerAs, type ConfigType } from '@nestjs/config';
import { IsInt, IsOptional, IsString, Max, Min, MinLength } from 'class-validator';
import { validateEnv } from './validate-env.js';

class SessionEnv {
  /**
   * Secret(s) for the login-session cookie, comma-separated, newest first (older ones still open
   * cookies during a rotation). When unset, a key is generated on first start and kept in the
   * database so that every instance behind the load balancer shares it.
   */
  @IsOptional() @IsString() @MinLength(32, { message: 'SESSION_SECRET must be at least 32 characters' })
  SESSION_SECRET?: string;

  @IsOptional() @IsInt() @Min(60) @Max(30 * 24 * 3600)
  SESSION_TTL_SECONDS?: number;
}

export const sessionConfig = registerAs('session', () => {
  const env = validateEnv(SessionEnv, process.env);
  const secrets = env.SESSION_SECRET?.split(',').map((s) => s.trim()).filter(Boolean) ?? [];
  const tooShort = secrets.filter((s) => s.length < 32);
  if (tooShort.length > 0) {
    throw new Error('Invalid configuration:\n  - SESSION_SECRET: every comma-separated secret must be at least 32 characters');
  }
  return {
    secrets,
    ttlSeconds: env.SESSION_TTL_SECONDS ?? 8 * 3600,
    cookieName: 'latchkey_session',
  };
});

export type SessionConfig = ConfigType<typeof sessionConfig>;
