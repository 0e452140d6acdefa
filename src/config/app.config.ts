import { registerAs, type ConfigType } from '@nestjs/config';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { IsIn, IsInt, IsOptional, IsString, IsUrl, Max, Min } from 'class-validator';
import { ConfigValidationError, validateEnv } from './validate-env.js';

/** The unsafe defaults that ALLOW_UNSAFE may re-admit in production (production-guards.ts). */
export const UNSAFE_DEFAULTS = ['sqlite', 'http', 'generated-keys'] as const;
export type UnsafeDefault = (typeof UNSAFE_DEFAULTS)[number];

/** LOG_FORMAT's values: JSON lines, or pino-pretty's coloured lines for a person (logging/pino-options.ts). */
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Names proxy-addr understands besides addresses: loopback, linklocal, uniquelocal. */
const PROXY_KEYWORDS = new Set(['loopback', 'linklocal', 'uniquelocal']);

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

  @IsOptional() @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL?: string;

  /** json or pretty; unset: pretty on a terminal outside production, JSON otherwise (pino-options.ts). */
  @IsOptional() @IsIn(LOG_FORMATS)
  LOG_FORMAT?: LogFormat;

  /** Comma-separated addresses or CIDR ranges of the load balancers whose X-Forwarded-* headers are believed. */
  @IsOptional() @IsString()
  TRUST_PROXY?: string;

  /** PEM certificate chain and private key: when both are set, Latchkey serves HTTPS itself. */
  @IsOptional() @IsString()
  TLS_CERT_FILE?: string;

  @IsOptional() @IsString()
  TLS_KEY_FILE?: string;

  /** Comma-separated unsafe defaults to accept in production anyway: sqlite, http, generated-keys. */
  @IsOptional() @IsString()
  ALLOW_UNSAFE?: string;

  /** How long SIGTERM waits for in-flight requests before the process exits anyway. */
  @IsOptional() @IsInt() @Min(1) @Max(300)
  SHUTDOWN_TIMEOUT_SECONDS?: number;
}

function list(value: string | undefined): string[] {
  return (value ?? '').split(',').map((item) => item.trim()).filter(Boolean);
}

/** An address, a CIDR range (10.0.0.0/8, fd00::/8) or a proxy-addr keyword. */
function isProxyAddress(entry: string): boolean {
  if (PROXY_KEYWORDS.has(entry)) return true;
  const [address, bits, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

function readPem(variable: string, path: string, problems: string[]): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch (error) {
    problems.push(`${variable}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    return undefined;
  }
}

/** PORT and HOST with their defaults. */
function listenAddressOf(env: AppEnv): { port: number; host: string } {
  return { port: env.PORT ?? 3000, host: env.HOST ?? '0.0.0.0' };
}

/** The public listener's address alone, for a namespace that must differ from it (metrics.config.ts), without appConfig's file reads. */
export function listenAddress(): { port: number; host: string } {
  return listenAddressOf(validateEnv(AppEnv, process.env));
}

/**
 * LOG_FORMAT and NODE_ENV read without validation, for main.ts's start-up failure line: that line
 * is written when the configuration itself may be what is wrong. A value it does not know counts as unset.
 */
export function startupLogFormat(): { format?: LogFormat; production: boolean } {
  const format = (LOG_FORMATS as readonly string[]).includes(process.env.LOG_FORMAT ?? '') ? (process.env.LOG_FORMAT as LogFormat) : undefined;
  return { format, production: process.env.NODE_ENV === 'production' };
}

export const appConfig = registerAs('app', () => {
  const env = validateEnv(AppEnv, process.env);
  const problems: string[] = [];
  const { port, host } = listenAddressOf(env);
  const issuer = (env.ISSUER ?? `http://localhost:${port}`).replace(/\/+$/, '');
  if (new URL(issuer).search || new URL(issuer).hash) problems.push('ISSUER: must not contain a query or fragment (RFC 8414 §2)');

  const trustProxy = list(env.TRUST_PROXY);
  for (const entry of trustProxy.filter((item) => !isProxyAddress(item))) {
    problems.push(`TRUST_PROXY: "${entry}" is not an IP address, a CIDR range or one of loopback, linklocal, uniquelocal`);
  }

  let tls: { cert: Buffer; key: Buffer } | undefined;
  if (Boolean(env.TLS_CERT_FILE) !== Boolean(env.TLS_KEY_FILE)) {
    problems.push('TLS_CERT_FILE and TLS_KEY_FILE: set both (HTTPS) or neither (HTTP behind a TLS-terminating load balancer)');
  } else if (env.TLS_CERT_FILE && env.TLS_KEY_FILE) {
    const cert = readPem('TLS_CERT_FILE', env.TLS_CERT_FILE, problems);
    const key = readPem('TLS_KEY_FILE', env.TLS_KEY_FILE, problems);
    if (cert && key) tls = { cert, key };
  }

  const allowUnsafe = list(env.ALLOW_UNSAFE);
  for (const entry of allowUnsafe.filter((item) => !(UNSAFE_DEFAULTS as readonly string[]).includes(item))) {
    problems.push(`ALLOW_UNSAFE: "${entry}" is not one of ${UNSAFE_DEFAULTS.join(', ')}`);
  }
  if (problems.length > 0) throw new ConfigValidationError(problems);

  return {
    port,
    host,
    issuer,
    nodeEnv: env.NODE_ENV ?? 'development',
    production: env.NODE_ENV === 'production',
    bodyLimitBytes: env.BODY_LIMIT_BYTES ?? 64 * 1024,
    logLevel: env.LOG_LEVEL ?? 'info',
    logFormat: env.LOG_FORMAT,
    trustProxy,
    tls,
    allowUnsafe: new Set(allowUnsafe as UnsafeDefault[]),
    shutdownTimeoutMs: (env.SHUTDOWN_TIMEOUT_SECONDS ?? 10) * 1000,
  };
});

export type AppConfig = ConfigType<typeof appConfig>;
