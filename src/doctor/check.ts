/**
 * One finding of `latchkey doctor`. A failure is what breaks the deployment or its security now
 * (it cannot start, refuses requests, tokens carry the wrong issuer, a dependency is down, a MUST
 * NOT of RFC 9700 is allowed): doctor then exits 1. A warning is a risk or a choice to review (a
 * SHOULD NOT allowed, limits off, a slow or crowded database, a setting production would refuse).
 */
export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

export interface CheckResult {
  /** Stable, for scripts reading --json: configuration, issuer, tls, clock, database, pool, migrations, redis, signing_keys, health, metrics, rate_limits, legacy_grants, production; and idp:<id> for each upstream identity provider. */
  id: string;
  status: CheckStatus;
  /** What was found, in one sentence or a few. */
  detail: string;
  /** What to do about it (warnings and failures). */
  fix?: string;
}

export const ok = (id: string, detail: string): CheckResult => ({ id, status: 'ok', detail });
export const skip = (id: string, detail: string): CheckResult => ({ id, status: 'skip', detail });
export const warn = (id: string, detail: string, fix: string): CheckResult => ({ id, status: 'warn', detail, fix });
export const fail = (id: string, detail: string, fix: string): CheckResult => ({ id, status: 'fail', detail, fix });
