import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { apiConfig } from './api.config.js';
import { appConfig } from './app.config.js';
import { readDatabaseConfig } from './database.config.js';
import { housekeepingConfig } from './housekeeping.config.js';
import { legacyGrantsConfig } from './legacy-grants.config.js';
import { macTokenConfig } from './mac-token.config.js';
import { metricsConfig } from './metrics.config.js';
import { rateLimitConfig } from './rate-limit.config.js';
import { oauthConfig } from './oauth.config.js';
import { sessionConfig } from './session.config.js';
import { ConfigValidationError, validateEnv } from './validate-env.js';
import { clearEnvForEachTest } from '../../test/helpers/with-env.js';

/** Every variable the config namespaces read; each test starts with none of them set. */
const CONFIG_VARIABLES = [
  'PORT',
  'HOST',
  'ISSUER',
  'NODE_ENV',
  'BODY_LIMIT_BYTES',
  'LOG_LEVEL',
  'LOG_FORMAT',
  'TRUST_PROXY',
  'TLS_CERT_FILE',
  'TLS_KEY_FILE',
  'ALLOW_UNSAFE',
  'SHUTDOWN_TIMEOUT_SECONDS',
  'CODE_TTL_SECONDS',
  'ACCESS_TOKEN_TTL_SECONDS',
  'REFRESH_TOKEN_TTL_SECONDS',
  'REFRESH_REUSE_GRACE_SECONDS',
  'SESSION_SECRET',
  'SESSION_TTL_SECONDS',
  'COLLECTIONS_FILE',
  'API_DEFAULT_LIMIT',
  'API_MAX_LIMIT',
  'IDEMPOTENCY_KEY_TTL_SECONDS',
  'IDEMPOTENCY_CLAIM_SECONDS',
];

/** The error a config factory throws, or undefined when it succeeds. */
function errorOf(factory: () => unknown): Error | undefined {
  try {
    factory();
    return undefined;
  } catch (error) {
    return error as Error;
  }
}

class SampleEnv {
  @IsOptional() @IsInt() @Min(1) @Max(10)
  COUNT?: number;

  @IsOptional() @IsString()
  NAME?: string;
}

describe('configuration validation', () => {
  clearEnvForEachTest(CONFIG_VARIABLES);

  describe(validateEnv.name, () => {
    it('converts numeric strings to numbers', () => {
      expect(validateEnv(SampleEnv, { COUNT: '7', NAME: 'x' })).toMatchObject({ COUNT: 7, NAME: 'x' });
    });

    it('reports every problem at once, each naming its variable', () => {
      const error = errorOf(() => validateEnv(SampleEnv, { COUNT: '11', NAME: undefined }));
      expect(error).toBeInstanceOf(ConfigValidationError);
      expect((error as ConfigValidationError).problems).toHaveLength(1);
      expect(error!.message).toMatch(/^Invalid configuration:\n {2}- COUNT: /);

      const two = errorOf(() => validateEnv(SampleEnv, { COUNT: 'many' }));
      expect((two as ConfigValidationError).problems.every((p) => p.startsWith('COUNT: '))).toBe(true);
    });

    it('says a value that is not a number is not a number, quoting what was given (not "got null")', () => {
      const error = errorOf(() => validateEnv(SampleEnv, { COUNT: 'soon' })) as ConfigValidationError;
      expect(error.problems).toEqual(['COUNT: must be a number (got "soon")']);
    });
  });

  // Issue 15: SHUTDOWN_TIMEOUT_SECONDS=soon said "must not be greater than 300 (got null)".
  describe.each([
    ['API_DEFAULT_LIMIT', apiConfig],
    ['API_MAX_LIMIT', apiConfig],
    ['PORT', appConfig],
    ['BODY_LIMIT_BYTES', appConfig],
    ['SHUTDOWN_TIMEOUT_SECONDS', appConfig],
    ['DATABASE_POOL_SIZE', () => readDatabaseConfig()],
    ['PURGE_INTERVAL_SECONDS', housekeepingConfig],
    ['PURGE_BATCH_SIZE', housekeepingConfig],
    ['PURGE_MAX_BATCHES', housekeepingConfig],
    ['PURGE_GRACE_SECONDS', housekeepingConfig],
    ['INSTANCE_HEARTBEAT_SECONDS', housekeepingConfig],
    ['IMPLICIT_TOKEN_TTL_SECONDS', legacyGrantsConfig],
    ['MAC_TIMESTAMP_WINDOW_SECONDS', macTokenConfig],
    ['METRICS_PORT', metricsConfig],
    ['CODE_TTL_SECONDS', oauthConfig],
    ['ACCESS_TOKEN_TTL_SECONDS', oauthConfig],
    ['REFRESH_TOKEN_TTL_SECONDS', oauthConfig],
    ['REFRESH_REUSE_GRACE_SECONDS', oauthConfig],
    ['RATE_LIMIT_CLIENT_PER_MINUTE', rateLimitConfig],
    ['RATE_LIMIT_API_PER_MINUTE', rateLimitConfig],
    ['LOGIN_FREE_FAILURES', rateLimitConfig],
    ['LOGIN_IP_FREE_FAILURES', rateLimitConfig],
    ['LOGIN_MAX_DELAY_SECONDS', rateLimitConfig],
    ['LOGIN_FAILURE_WINDOW_SECONDS', rateLimitConfig],
    ['SESSION_TTL_SECONDS', sessionConfig],
  ] as [string, () => unknown][])('%s=soon', (name, factory) => {
    it('is refused as not a number, once, quoting the value', () => {
      const saved = process.env[name];
      process.env[name] = 'soon';
      try {
        const error = errorOf(factory) as ConfigValidationError;
        expect(error).toBeInstanceOf(ConfigValidationError);
        expect(error.problems).toEqual([`${name}: must be a number (got "soon")`]);
      } finally {
        if (saved === undefined) delete process.env[name];
        else process.env[name] = saved;
      }
    });
  });

  describe('oauth', () => {
    it('defaults to a 600 s code, a 1 h access token, a 30 day refresh token and a 10 s reuse grace', () => {
      expect(oauthConfig()).toEqual({ codeTtlSeconds: 600, accessTokenTtlSeconds: 3600, refreshTokenTtlSeconds: 30 * 24 * 3600, refreshReuseGraceSeconds: 10 });
    });

    it('accepts CODE_TTL_SECONDS up to 600 (RFC 6749 §4.1.2: at most 10 minutes)', () => {
      process.env.CODE_TTL_SECONDS = '600';
      expect(oauthConfig().codeTtlSeconds).toBe(600);
      process.env.CODE_TTL_SECONDS = '30';
      expect(oauthConfig().codeTtlSeconds).toBe(30);
    });

    it.each(['601', '3600', '0', '-5', '60.5', 'ten'])('refuses CODE_TTL_SECONDS=%s', (value) => {
      process.env.CODE_TTL_SECONDS = value;
      const error = errorOf(() => oauthConfig());
      expect(error).toBeInstanceOf(ConfigValidationError);
      expect(error!.message).toContain('CODE_TTL_SECONDS');
    });

    it.each([
      ['ACCESS_TOKEN_TTL_SECONDS', '0'],
      ['ACCESS_TOKEN_TTL_SECONDS', 'forever'],
      ['REFRESH_TOKEN_TTL_SECONDS', '-1'],
      ['REFRESH_REUSE_GRACE_SECONDS', '-1'],
      ['REFRESH_REUSE_GRACE_SECONDS', '61'],
      ['REFRESH_REUSE_GRACE_SECONDS', '2.5'],
    ])('refuses %s=%s', (name, value) => {
      process.env[name] = value;
      expect(errorOf(() => oauthConfig())?.message).toContain(name);
    });

    it('reads configured token lifetimes', () => {
      process.env.ACCESS_TOKEN_TTL_SECONDS = '900';
      process.env.REFRESH_TOKEN_TTL_SECONDS = '86400';
      expect(oauthConfig()).toMatchObject({ accessTokenTtlSeconds: 900, refreshTokenTtlSeconds: 86400 });
    });

    it('reads REFRESH_REUSE_GRACE_SECONDS, 0 turning the grace off', () => {
      process.env.REFRESH_REUSE_GRACE_SECONDS = '0';
      expect(oauthConfig().refreshReuseGraceSeconds).toBe(0);
      process.env.REFRESH_REUSE_GRACE_SECONDS = '30';
      expect(oauthConfig().refreshReuseGraceSeconds).toBe(30);
    });
  });

  describe('session', () => {
    it('has no configured secret by default (one is generated and kept in the database)', () => {
      expect(sessionConfig()).toEqual({ secrets: [], ttlSeconds: 8 * 3600, cookieName: 'latchkey_session' });
    });

    it('accepts a secret of 32 characters', () => {
      process.env.SESSION_SECRET = 's'.repeat(32);
      expect(sessionConfig().secrets).toEqual(['s'.repeat(32)]);
    });

    it('refuses a secret shorter than 32 characters', () => {
      process.env.SESSION_SECRET = 's'.repeat(31);
      expect(errorOf(() => sessionConfig())?.message).toContain('SESSION_SECRET');
    });

    it('reads several comma-separated secrets, newest first, and refuses the list when one is short', () => {
      const newest = 'n'.repeat(40);
      const older = 'o'.repeat(32);
      process.env.SESSION_SECRET = `${newest}, ${older}`;
      expect(sessionConfig().secrets).toEqual([newest, older]);
      process.env.SESSION_SECRET = `${newest},short`;
      expect(errorOf(() => sessionConfig())?.message).toContain('SESSION_SECRET');
    });

    it('does not print the refused secret in the error message (it ends up in logs)', () => {
      const secret = 'hunter2-but-too-short';
      process.env.SESSION_SECRET = secret;
      const error = errorOf(() => sessionConfig());
      expect(error?.message).toContain('SESSION_SECRET');
      expect(error?.message).not.toContain(secret);
    });
  });

  describe('database', () => {
    it('defaults to the embedded SQLite file, with migrations applied on start', () => {
      expect(readDatabaseConfig({})).toEqual({
        url: 'sqlite:data/latchkey.sqlite',
        dialect: 'sqlite',
        sqlitePath: 'data/latchkey.sqlite',
        listenUrl: undefined,
        schema: undefined,
        poolMode: 'session',
        poolSize: 10,
        rowCacheSeconds: 60,
        tokenCacheMb: 64,
        clientCacheMb: 16,
        migrationsRun: true,
        logging: false,
      });
    });

    it.each(['postgres://u:p@db.example:5432/latchkey', 'postgresql://db.example/latchkey'])('reads %s as PostgreSQL, leaving migrations to the operator by default', (url) => {
      expect(readDatabaseConfig({ DATABASE_URL: url })).toMatchObject({ url, dialect: 'postgres', sqlitePath: undefined, migrationsRun: false });
    });

    it('reads the schema, pool size, row cache, MIGRATIONS_RUN and DATABASE_LOGGING', () => {
      const config = readDatabaseConfig({ DATABASE_URL: 'postgres://db/x', DATABASE_SCHEMA: 'tenant_a', DATABASE_POOL_SIZE: '25', ROW_CACHE_SECONDS: '0', MIGRATIONS_RUN: 'true', DATABASE_LOGGING: 'true' });
      expect(config).toMatchObject({ schema: 'tenant_a', poolSize: 25, rowCacheSeconds: 0, migrationsRun: true, logging: true });
      expect(readDatabaseConfig({ MIGRATIONS_RUN: 'false' }).migrationsRun).toBe(false);
    });

    it('reads TOKEN_CACHE_MB and CLIENT_CACHE_MB, the memory of the row caches (issue 47), where 0 turns one off', () => {
      expect(readDatabaseConfig({ DATABASE_URL: 'postgres://db/x', TOKEN_CACHE_MB: '256', CLIENT_CACHE_MB: '0' })).toMatchObject({ tokenCacheMb: 256, clientCacheMb: 0 });
      expect(readDatabaseConfig({ TOKEN_CACHE_MB: '0', CLIENT_CACHE_MB: '4096' })).toMatchObject({ tokenCacheMb: 0, clientCacheMb: 4096 });
    });

    it('reads DATABASE_LISTEN_URL, where the LISTEN connection goes, on PostgreSQL only (default: the pool\'s DATABASE_URL)', () => {
      expect(readDatabaseConfig({ DATABASE_URL: 'postgres://pgbouncer/x', DATABASE_LISTEN_URL: 'postgres://db/x' }).listenUrl).toBe('postgres://db/x');
      expect(readDatabaseConfig({ DATABASE_URL: 'postgres://db/x' }).listenUrl).toBeUndefined();
      expect(readDatabaseConfig({ DATABASE_LISTEN_URL: 'postgres://db/x' }).listenUrl).toBeUndefined();
    });

    it('reads DATABASE_POOL_MODE (default session, and session on SQLite whatever it says), and refuses DATABASE_SCHEMA through a transaction pooler', () => {
      expect(readDatabaseConfig({ DATABASE_URL: 'postgres://db/x' }).poolMode).toBe('session');
      expect(readDatabaseConfig({ DATABASE_URL: 'postgres://pgbouncer/x', DATABASE_POOL_MODE: 'transaction' }).poolMode).toBe('transaction');
      expect(readDatabaseConfig({ DATABASE_POOL_MODE: 'transaction' }).poolMode).toBe('session');
      const refused = errorOf(() => readDatabaseConfig({ DATABASE_URL: 'postgres://pgbouncer/x', DATABASE_POOL_MODE: 'transaction', DATABASE_SCHEMA: 'tenant_a' }));
      expect(refused).toBeInstanceOf(ConfigValidationError);
      expect(refused?.message).toContain('DATABASE_SCHEMA: cannot be used with DATABASE_POOL_MODE=transaction');
    });

    it.each([
      ['DATABASE_URL', 'mysql://root@db/latchkey'],
      ['DATABASE_POOL_MODE', 'statement'],
      ['DATABASE_URL', 'http://db.example/latchkey'],
      ['DATABASE_URL', 'sqlite:'],
      ['DATABASE_URL', 'data/latchkey.sqlite'],
      ['DATABASE_SCHEMA', 'Tenant'],
      ['DATABASE_SCHEMA', 'x"; DROP SCHEMA public; --'],
      ['DATABASE_POOL_SIZE', '0'],
      ['ROW_CACHE_SECONDS', '-1'],
      ['ROW_CACHE_SECONDS', '3601'],
      ['TOKEN_CACHE_MB', '-1'],
      ['TOKEN_CACHE_MB', '4097'],
      ['TOKEN_CACHE_MB', '1.5'],
      ['TOKEN_CACHE_MB', 'lots'],
      ['CLIENT_CACHE_MB', '-1'],
      ['CLIENT_CACHE_MB', '4097'],
      ['MIGRATIONS_RUN', 'yes please'],
      ['DATABASE_LISTEN_URL', 'sqlite:data/latchkey.sqlite'],
      ['DATABASE_LISTEN_URL', 'db.example:5432'],
    ])('refuses %s=%j', (name, value) => {
      const error = errorOf(() => readDatabaseConfig({ [name]: value }));
      expect(error).toBeInstanceOf(ConfigValidationError);
      expect(error!.message).toContain(name);
    });

    it('does not print the password of a refused DATABASE_URL', () => {
      const error = errorOf(() => readDatabaseConfig({ DATABASE_URL: 'mysql://admin:s3cr3t-pa55@db.example/latchkey' }));
      expect(error?.message).toContain('DATABASE_URL');
      expect(error?.message).not.toContain('s3cr3t-pa55');
    });
  });

  describe('app', () => {
    it('defaults to port 3000 on all interfaces, issuer http://localhost:3000', () => {
      expect(appConfig()).toEqual({
        port: 3000,
        host: '0.0.0.0',
        issuer: 'http://localhost:3000',
        nodeEnv: 'development',
        production: false,
        bodyLimitBytes: 64 * 1024,
        logLevel: 'info',
        logFormat: undefined,
        trustProxy: [],
        tls: undefined,
        allowUnsafe: new Set(),
        shutdownTimeoutMs: 10_000,
      });
    });

    it('accepts LOG_FORMAT=json and LOG_FORMAT=pretty', () => {
      process.env.LOG_FORMAT = 'pretty';
      expect(appConfig().logFormat).toBe('pretty');
      process.env.LOG_FORMAT = 'json';
      expect(appConfig().logFormat).toBe('json');
    });

    it('derives the default issuer from PORT and drops a trailing slash from ISSUER', () => {
      process.env.PORT = '8080';
      expect(appConfig().issuer).toBe('http://localhost:8080');
      process.env.ISSUER = 'https://auth.example.com/';
      expect(appConfig().issuer).toBe('https://auth.example.com');
    });

    it.each([
      ['ISSUER', 'https://auth.example.com/?tenant=a'],
      ['ISSUER', 'https://auth.example.com/#x'],
      ['ISSUER', 'ftp://auth.example.com'],
      ['ISSUER', 'auth.example.com'],
      ['PORT', '70000'],
      ['PORT', 'http'],
      ['NODE_ENV', 'staging'],
      ['LOG_LEVEL', 'verbose'],
      ['LOG_FORMAT', 'text'],
    ])('refuses %s=%s', (name, value) => {
      process.env[name] = value;
      expect(errorOf(() => appConfig())?.message).toContain(name);
    });
  });

  describe('api', () => {
    it('defaults to 20 items a page and at most 100', () => {
      expect(apiConfig()).toMatchObject({ defaultLimit: 20, maxLimit: 100 });
    });

    it('keeps an Idempotency-Key 24 h and lets a claim hold 10 s by default, and refuses values out of range', () => {
      expect(apiConfig()).toMatchObject({ idempotencyKeyTtlSeconds: 86400, idempotencyClaimSeconds: 10 });
      for (const [name, value] of [['IDEMPOTENCY_KEY_TTL_SECONDS', '30'], ['IDEMPOTENCY_CLAIM_SECONDS', '0'], ['IDEMPOTENCY_CLAIM_SECONDS', '301']]) {
        process.env[name] = value;
        expect(errorOf(() => apiConfig())?.message).toContain(name);
        delete process.env[name];
      }
    });

    it('refuses a default page size above the maximum', () => {
      process.env.API_DEFAULT_LIMIT = '50';
      process.env.API_MAX_LIMIT = '10';
      const message = errorOf(() => apiConfig())?.message;
      expect(message).toContain('API_DEFAULT_LIMIT');
      expect(message).toContain('API_MAX_LIMIT');
    });
  });
});
