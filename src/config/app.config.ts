import { registerAs, type ConfigType } from '@nestjs/config';
import { IsIn, IsInt, IsOptional, IsString, IsUrl, Max, Min } from 'class-validator';
import { validateEnv } from './validate-env.js';

class AppEnv {
  @IsOptional() @IsInt() @Min(0) @Max(65535)
  PORT?: number;

  @IsOptional() @IsString()
  HOST?: string;

  /** RFC 8414 §2: the issuer is an https URL without query or fragment (http allowed for development). */
  @IsOptional() @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  ISSUER?: string;

  @IsOptional() @IsIn(['development', 'production', 'test'])
  NODE_ENV?: string;

  /** Largest accepted request body, in bytes. */
  @IsOptional() @IsInt() @Min(1024) @Max(10 * 1024 * 1024)
  BODY_LIMIT_BYTES?: number;

  @IsOptional() @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'silent'])
  LOG_LEVEL?: string;
}

export const appConfig = registerAs('app', () => {
  const env = validateEnv(AppEnv, process.env);
  const port = env.PORT ?? 3000;
  const issuer = (env.ISSUER ?? `http://localhost:${port}`).replace(/\/+$/, '');
  if (new URL(issuer).search || new URL(issuer).hash) {
    throw new Error('Invalid configuration:\n  - ISSUER: must not contain a query or fragment (RFC 8414 §2)');
  }
  return {
    port,
    host: env.HOST ?? '0.0.0.0',
    issuer,
    nodeEnv: env.NODE_ENV ?? 'development',
    bodyLimitBytes: env.BODY_LIMIT_BYTES ?? 64 * 1024,
    logLevel: env.LOG_LEVEL ?? 'info',
  };
});

export type AppConfig = ConfigType<typeof appConfig>;
