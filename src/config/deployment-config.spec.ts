import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appConfig } from './app.config.js';
import { readDatabaseConfig } from './database.config.js';
import { factorsConfig } from './factors.config.js';
import { macTokenConfig } from './mac-token.config.js';
import { openIdConfig } from './openid.config.js';
import { productionProblems } from './production-guards.js';
import { sessionConfig } from './session.config.js';
import { ConfigValidationError } from './validate-env.js';
import { clearEnvForEachTest } from '../../test/helpers/with-env.js';

/** The deployment settings of issue #5: proxies, TLS, unsafe defaults, and what production refuses. */
const VARIABLES = ['NODE_ENV', 'ISSUER', 'PORT', 'TRUST_PROXY', 'TLS_CERT_FILE', 'TLS_KEY_FILE', 'ALLOW_UNSAFE', 'SESSION_SECRET', 'SHUTDOWN_TIMEOUT_SECONDS', 'TOKEN_ENCRYPTION_KEY', 'SIGNING_KEY_ENCRYPTION_KEY', 'FACTOR_ENCRYPTION_KEY'];
const SECRET = 'x'.repeat(40);
const ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');
const POSTGRES = { DATABASE_URL: 'postgres://latchkey@db.internal:5432/latchkey' };

function problemsOf(factory: () => unknown): string[] {
  try {
    factory();
    return [];
  } catch (error) {
    if (error instanceof ConfigValidationError) return error.problems;
    throw error;
  }
}

function production(env: Record<string, string>, database: Record<string, string> = POSTGRES): string[] {
  Object.assign(process.env, { NODE_ENV: 'production' }, env);
  return productionProblems({ app: appConfig(), database: readDatabaseConfig(database), session: sessionConfig(), macToken: macTokenConfig(), openId: openIdConfig(), factors: factorsConfig() });
}

describe('deployment configuration', () => {
  clearEnvForEachTest(VARIABLES);

  describe('TRUST_PROXY', () => {
    it('accepts addresses, CIDR ranges and proxy-addr keywords, comma-separated', () => {
      process.env.TRUST_PROXY = '10.0.0.5, 192.168.0.0/16,fd00::/8, loopback';
      expect(appConfig().trustProxy).toEqual(['10.0.0.5', '192.168.0.0/16', 'fd00::/8', 'loopback']);
    });

    it.each(['true', '*', '10.0.0.0/33', 'lb.internal', '10.0.0.1/8/2'])('refuses %s, naming it', (value) => {
      process.env.TRUST_PROXY = value;
      const problems = problemsOf(() => appConfig());
      expect(problems).toHaveLength(1);
      expect(problems[0]).toContain('TRUST_PROXY');
      expect(problems[0]).toContain(`"${value}"`);
    });

    it('trusts no proxy by default', () => {
      expect(appConfig().trustProxy).toEqual([]);
    });
  });

  describe('TLS_CERT_FILE and TLS_KEY_FILE', () => {
    it('reads both files', () => {
      const dir = mkdtempSync(join(tmpdir(), 'latchkey-tls-config-'));
      writeFileSync(join(dir, 'cert.pem'), 'CERT');
      writeFileSync(join(dir, 'key.pem'), 'KEY');
      Object.assign(process.env, { TLS_CERT_FILE: join(dir, 'cert.pem'), TLS_KEY_FILE: join(dir, 'key.pem') });
      expect(appConfig().tls).toEqual({ cert: Buffer.from('CERT'), key: Buffer.from('KEY') });
    });

    it('refuses one without the other', () => {
      process.env.TLS_CERT_FILE = '/etc/ssl/cert.pem';
      expect(problemsOf(() => appConfig())).toEqual([expect.stringContaining('set both')]);
    });

    it('names a file it cannot read', () => {
      Object.assign(process.env, { TLS_CERT_FILE: '/nonexistent/cert.pem', TLS_KEY_FILE: '/nonexistent/key.pem' });
      expect(problemsOf(() => appConfig())).toEqual([
        'TLS_CERT_FILE: cannot read /nonexistent/cert.pem (ENOENT)',
        'TLS_KEY_FILE: cannot read /nonexistent/key.pem (ENOENT)',
      ]);
    });
  });

  describe('ALLOW_UNSAFE', () => {
    it('refuses a name it does not know', () => {
      process.env.ALLOW_UNSAFE = 'sqlite,everything';
      expect(problemsOf(() => appConfig())).toEqual([expect.stringContaining('"everything" is not one of sqlite, http, generated-keys')]);
    });
  });

  describe(productionProblems.name, () => {
    it('accepts a safe production configuration', () => {
      expect(production({ ISSUER: 'https://auth.example.com', SESSION_SECRET: SECRET, TOKEN_ENCRYPTION_KEY: ENCRYPTION_KEY, SIGNING_KEY_ENCRYPTION_KEY: ENCRYPTION_KEY, FACTOR_ENCRYPTION_KEY: ENCRYPTION_KEY })).toEqual([]);
    });

    it('refuses the zero-set-up defaults in production, one message each', () => {
      const problems = production({}, {});
      expect(problems).toHaveLength(6);
      expect(problems[0]).toMatch(/^DATABASE_URL: SQLite/);
      expect(problems[1]).toMatch(/^ISSUER: must be an https URL in production, got "http:\/\/localhost:3000"/);
      expect(problems[2]).toMatch(/^SESSION_SECRET: /);
      expect(problems[3]).toMatch(/^TOKEN_ENCRYPTION_KEY: /);
      expect(problems[4]).toMatch(/^SIGNING_KEY_ENCRYPTION_KEY: /);
      expect(problems[5]).toMatch(/^FACTOR_ENCRYPTION_KEY: /);
    });

    it.each([
      ['sqlite', {}, { ISSUER: 'https://a.example', SESSION_SECRET: SECRET, TOKEN_ENCRYPTION_KEY: ENCRYPTION_KEY, SIGNING_KEY_ENCRYPTION_KEY: ENCRYPTION_KEY, FACTOR_ENCRYPTION_KEY: ENCRYPTION_KEY }, 1],
      ['http', POSTGRES, { ISSUER: 'http://a.example', SESSION_SECRET: SECRET, TOKEN_ENCRYPTION_KEY: ENCRYPTION_KEY, SIGNING_KEY_ENCRYPTION_KEY: ENCRYPTION_KEY, FACTOR_ENCRYPTION_KEY: ENCRYPTION_KEY }, 1],
      ['generated-keys', POSTGRES, { ISSUER: 'https://a.example' }, 4],
      ['generated-keys', POSTGRES, { ISSUER: 'https://a.example', SESSION_SECRET: SECRET, TOKEN_ENCRYPTION_KEY: ENCRYPTION_KEY, FACTOR_ENCRYPTION_KEY: ENCRYPTION_KEY }, 1],
      ['generated-keys', POSTGRES, { ISSUER: 'https://a.example', SESSION_SECRET: SECRET, TOKEN_ENCRYPTION_KEY: ENCRYPTION_KEY, SIGNING_KEY_ENCRYPTION_KEY: ENCRYPTION_KEY }, 1],
      ['generated-keys', POSTGRES, { ISSUER: 'https://a.example', TOKEN_ENCRYPTION_KEY: ENCRYPTION_KEY, SIGNING_KEY_ENCRYPTION_KEY: ENCRYPTION_KEY, FACTOR_ENCRYPTION_KEY: ENCRYPTION_KEY }, 1],
      ['generated-keys', POSTGRES, { ISSUER: 'https://a.example', SESSION_SECRET: SECRET, SIGNING_KEY_ENCRYPTION_KEY: ENCRYPTION_KEY, FACTOR_ENCRYPTION_KEY: ENCRYPTION_KEY }, 1],
    ])('lets ALLOW_UNSAFE=%s through, and only that', (allowed, database, env, refused) => {
      expect(production(env as Record<string, string>, database as Record<string, string>)).toHaveLength(refused as number);
      expect(production({ ...(env as Record<string, string>), ALLOW_UNSAFE: allowed }, database as Record<string, string>)).toEqual([]);
    });

    it('refuses nothing outside production', () => {
      process.env.NODE_ENV = 'development';
      expect(productionProblems({ app: appConfig(), database: readDatabaseConfig({}), session: sessionConfig(), macToken: macTokenConfig(), openId: openIdConfig(), factors: factorsConfig() })).toEqual([]);
    });
  });
});
