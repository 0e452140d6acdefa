import type { CheckResult } from './check.js';
import { configurationChecks } from './configuration.checks.js';
import { databaseChecks } from './database.checks.js';
import { identityProviderChecks } from './identity-provider.checks.js';
import { mailCheck } from './mail.checks.js';
import { publicUrlChecks, redisCheck } from './network.checks.js';
import { withoutCredentials } from './without-credentials.js';

export interface DoctorReport {
  /** No failure (warnings allowed). */
  ok: boolean;
  failures: number;
  warnings: number;
  checks: CheckResult[];
}

/**
 * `latchkey doctor`: what goes wrong in deployments, checked against this environment (the one
 * the instances get) and, with `url`, the deployment as clients reach it. Each check reuses what
 * start-up itself runs (the configuration namespaces, the production guards, the legacy-grant
 * warning, the signing keys' states, the outbound guard); none changes anything. Run by the CLI
 * and by GET /admin/api/v1/doctor (issue 48); no finding shows a password of a URL.
 */
export async function runDoctor(options: { url?: string }): Promise<DoctorReport> {
  const checks: CheckResult[] = [];
  const settings = configurationChecks(checks);
  if (settings) {
    const rows = await databaseChecks(settings.database, settings.signingKeyEncryptionKeys, checks);
    checks.push(await redisCheck(settings.redis));
    checks.push(...(await publicUrlChecks(options.url, settings.app, settings.metrics)));
    // One entry per upstream identity provider (issue 45); none configured, none listed.
    checks.push(...(await identityProviderChecks(rows.identityProviders, settings.outbound)));
    checks.push(await mailCheck());
  }
  const count = (status: CheckResult['status']): number => checks.filter((check) => check.status === status).length;
  return { ok: count('fail') === 0, failures: count('fail'), warnings: count('warn'), checks: checks.map(withoutCredentials) };
}
