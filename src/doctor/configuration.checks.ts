import { mailConfig } from '../config/mail.config.js';
import { scimConfig } from '../config/scim.config.js';
import { apiConfig } from '../config/api.config.js';
import { appConfig, type AppConfig } from '../config/app.config.js';
import { clientAuthConfig } from '../config/client-auth.config.js';
import { corsConfig } from '../config/cors.config.js';
import { readDatabaseConfig, type DatabaseConfig } from '../config/database.config.js';
import { dpopConfig } from '../config/dpop.config.js';
import { factorsConfig } from '../config/factors.config.js';
import { fapiConfig } from '../config/fapi.config.js';
import { housekeepingConfig } from '../config/housekeeping.config.js';
import { legacyGrantsConfig } from '../config/legacy-grants.config.js';
import { logoutConfig } from '../config/logout.config.js';
import { macTokenConfig } from '../config/mac-token.config.js';
import { metricsConfig, type MetricsConfig } from '../config/metrics.config.js';
import { oauthConfig } from '../config/oauth.config.js';
import { openIdConfig } from '../config/openid.config.js';
import { outboundConfig, type OutboundConfig } from '../config/outbound.config.js';
import { parConfig } from '../config/par.config.js';
import { passkeyConfig } from '../config/passkey.config.js';
import { productionProblems } from '../config/production-guards.js';
import { rateLimitConfig, REDIS_UNSET_WARNING, type RateLimitConfig } from '../config/rate-limit.config.js';
import { redisConfig, type RedisConfig } from '../config/redis.config.js';
import { sessionConfig } from '../config/session.config.js';
import { ConfigValidationError } from '../config/validate-env.js';
import { fail, ok, warn, type CheckResult } from './check.js';

/** The settings the other checks need, as the server reads them. */
export interface DeploymentSettings {
  app: AppConfig;
  database: DatabaseConfig;
  redis: RedisConfig;
  rateLimit: RateLimitConfig;
  metrics: MetricsConfig;
  /** How outgoing requests are guarded: the identity providers are checked through the same guard. */
  outbound: OutboundConfig;
  /** SIGNING_KEY_ENCRYPTION_KEY's keys, newest first; none: the generated one. */
  signingKeyEncryptionKeys: readonly Buffer[];
}

/** Every namespace the server validates at start-up, read the same way: a problem here stops the server. */
const NAMESPACES: (() => unknown)[] = [apiConfig, clientAuthConfig, corsConfig, dpopConfig, factorsConfig, fapiConfig, housekeepingConfig, legacyGrantsConfig, logoutConfig, macTokenConfig, mailConfig, oauthConfig, openIdConfig, parConfig, passkeyConfig, scimConfig, sessionConfig];

/** Reads the configuration as start-up does; returns the settings, or undefined when it would not start. */
export function configurationChecks(results: CheckResult[]): DeploymentSettings | undefined {
  const problems: string[] = [];
  const read = <T>(factory: () => T): T | undefined => {
    try {
      return factory();
    } catch (error) {
      problems.push(...(error instanceof ConfigValidationError ? error.problems : [(error as Error).message]));
      return undefined;
    }
  };
  const settings = {
    app: read(appConfig),
    database: read(readDatabaseConfig),
    redis: read(redisConfig),
    rateLimit: read(rateLimitConfig),
    metrics: read(metricsConfig),
    outbound: read(outboundConfig),
    signingKeyEncryptionKeys: read(openIdConfig)?.signingKeyEncryptionKeys,
  };
  for (const namespace of NAMESPACES) read(namespace);
  if (problems.length > 0) {
    results.push(fail('configuration', `The server would not start: ${problems.join('; ')}`, 'Correct each variable named (docs/operations/configuration.md).'));
    return undefined;
  }
  results.push(ok('configuration', 'Every setting is valid.'));
  const deployment = settings as DeploymentSettings;
  results.push(productionCheck(deployment));
  results.push(transportCheck(deployment.app));
  results.push(rateLimitCheck(deployment));
  return deployment;
}

/**
 * The production guards (production-guards.ts), the very function start-up runs. Outside
 * production they are warnings: what NODE_ENV=production would refuse.
 */
function productionCheck({ app, database }: DeploymentSettings): CheckResult {
  const settings = { database, session: sessionConfig(), macToken: macTokenConfig(), openId: openIdConfig(), factors: factorsConfig() };
  const problems = productionProblems({ ...settings, app: { ...app, production: true } });
  if (problems.length === 0) return ok('production', app.production ? 'The production guards pass.' : 'NODE_ENV=production would start with these settings.');
  const fix = 'Set each variable named, or accept the default knowingly with ALLOW_UNSAFE (docs/operations/production-guards.md).';
  if (app.production) return fail('production', `Start-up refuses: ${problems.join('; ')}`, fix);
  return warn('production', `With NODE_ENV=production start-up would refuse: ${problems.join('; ')}`, fix);
}

/** RFC 6749 §3.1, §10.9: TLS everywhere. Either Latchkey serves it, or a proxy it trusts says a request came over it. */
function transportCheck(app: AppConfig): CheckResult {
  if (app.tls) return ok('tls', 'Latchkey serves HTTPS itself (TLS_CERT_FILE, TLS_KEY_FILE).');
  if (app.trustProxy.length > 0) return ok('tls', `TLS is terminated by a proxy Latchkey trusts (TRUST_PROXY=${app.trustProxy.join(',')}); it must replace X-Forwarded-Proto and X-Forwarded-For, not append to them.`);
  const fix = 'Terminate TLS at your load balancer and name it in TRUST_PROXY, or set TLS_CERT_FILE and TLS_KEY_FILE (docs/operations/https.md).';
  if (app.issuer.startsWith('https://') && app.production) {
    return fail('tls', `ISSUER is https, but Latchkey neither serves TLS nor trusts a proxy: every request arrives as plain http and is refused with https_required.`, fix);
  }
  return warn('tls', 'Neither TLS nor a trusted proxy is configured: fine on a laptop, not in a deployment.', fix);
}

function rateLimitCheck({ app, redis, rateLimit }: DeploymentSettings): CheckResult {
  const off = [rateLimit.clientPerMinute === 0 ? 'RATE_LIMIT_CLIENT_PER_MINUTE' : undefined, rateLimit.apiPerMinute === 0 ? 'RATE_LIMIT_API_PER_MINUTE' : undefined].filter(Boolean);
  if (off.length > 0) return warn('rate_limits', `Rate limits are off (${off.join(', ')}=0).`, 'Unset them (defaults 600 and 1200 a minute) unless something in front of Latchkey limits instead (docs/operations/rate-limits.md).');
  if (!redis.url && app.production) return warn('rate_limits', `${REDIS_UNSET_WARNING}.`, 'Set REDIS_URL when more than one instance runs (docs/operations/rate-limits.md).');
  return ok('rate_limits', `${rateLimit.clientPerMinute} a minute per client at /token, /par, /introspect, /revoke; ${rateLimit.apiPerMinute} a minute per token at /api/v1; counted ${redis.url ? 'in Redis' : 'by this instance'}.`);
}
