import type { AppConfig } from './app.config.js';
import type { DatabaseConfig } from './database.config.js';
import type { FactorsConfig } from './factors.config.js';
import type { MacTokenConfig } from './mac-token.config.js';
import type { OpenIdConfig } from './openid.config.js';
import type { SessionConfig } from './session.config.js';
import { ConfigValidationError } from './validate-env.js';

interface DeploymentSettings {
  app: AppConfig;
  database: DatabaseConfig;
  session: SessionConfig;
  macToken: MacTokenConfig;
  openId: OpenIdConfig;
  factors: FactorsConfig;
}

/**
 * With NODE_ENV=production, the defaults that make `npm start` work with no set-up become refusals:
 * each is safe on a laptop and wrong in a deployment. ALLOW_UNSAFE names the ones an operator
 * accepts anyway (a benchmark, a single-instance demo), so the choice is explicit and visible.
 */
export function productionProblems({ app, database, session, macToken, openId, factors }: DeploymentSettings): string[] {
  if (!app.production) return [];
  const problems: string[] = [];

  if (database.dialect === 'sqlite' && !app.allowUnsafe.has('sqlite')) {
    problems.push('DATABASE_URL: SQLite is a single file that instances cannot share; use postgres://… in production (or ALLOW_UNSAFE=sqlite)');
  }
  // RFC 8414 §2 and RFC 6749 §3.1/§3.2: the issuer and the endpoints it names are https.
  if (!app.issuer.startsWith('https://') && !app.allowUnsafe.has('http')) {
    problems.push(`ISSUER: must be an https URL in production, got "${app.issuer}" (or ALLOW_UNSAFE=http)`);
  }
  // A generated cookie key lives in the database beside everything else; a configured secret does not.
  if (session.secrets.length === 0 && !app.allowUnsafe.has('generated-keys')) {
    problems.push('SESSION_SECRET: set at least 32 random characters in production, the same on every instance (or ALLOW_UNSAFE=generated-keys)');
  }
  // The same for the key that encrypts MAC tokens' mac_keys: kept beside the ciphertexts, it protects nothing.
  if (macToken.encryptionKeys.length === 0 && !app.allowUnsafe.has('generated-keys')) {
    problems.push('TOKEN_ENCRYPTION_KEY: set the base64 of 32 random bytes in production (openssl rand -base64 32), the same on every instance (or ALLOW_UNSAFE=generated-keys)');
  }
  // And for the key that seals the ID-token signing keys: whoever reads the database could sign as us.
  if (openId.signingKeyEncryptionKeys.length === 0 && !app.allowUnsafe.has('generated-keys')) {
    problems.push('SIGNING_KEY_ENCRYPTION_KEY: set the base64 of 32 random bytes in production (openssl rand -base64 32), the same on every instance (or ALLOW_UNSAFE=generated-keys)');
  }
  // And for the key that seals one-time-code secrets: whoever reads the database could compute everyone's codes.
  if (factors.encryptionKeys.length === 0 && !app.allowUnsafe.has('generated-keys')) {
    problems.push('FACTOR_ENCRYPTION_KEY: set the base64 of 32 random bytes in production (openssl rand -base64 32), the same on every instance (or ALLOW_UNSAFE=generated-keys)');
  }
  return problems;
}

export function assertSafeForProduction(settings: DeploymentSettings): void {
  const problems = productionProblems(settings);
  if (problems.length > 0) throw new ConfigValidationError(problems);
}
