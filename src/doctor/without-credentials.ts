import type { CheckResult } from './check.js';

/** `scheme://user:password@`: the user information of a URL (RFC 3986 §3.2.1), whose password part must never be shown. */
const USER_INFO = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#@:]*):([^\s/?#@]*)@/gi;

/**
 * A finding with any password in a URL replaced. The checks never print DATABASE_URL or REDIS_URL
 * themselves, but they quote drivers' error messages, which may; and the admin API shows the
 * report to an auditor who must not learn the database's password from it (issue 48).
 */
export function withoutCredentials(check: CheckResult): CheckResult {
  const clean = (text: string) => text.replace(USER_INFO, '$1$2:[redacted]@');
  return { ...check, detail: clean(check.detail), ...(check.fix === undefined ? {} : { fix: clean(check.fix) }) };
}
