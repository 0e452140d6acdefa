/**
 * Whether an error means "the database cannot serve this right now" rather than "this query is
 * wrong": the request then gets 503 temporarily_unavailable with Retry-After (the load balancer or
 * the client tries again; the instance recovers by itself when the database returns), not a 500.
 * A failover passes through every one of these (issue 44): connections cut by the old primary's
 * shutdown, the old primary back read-only before it is demoted or promoted, the new one starting
 * up, a pooler that cannot reach either. The transaction that failed was rolled back by
 * PostgreSQL, so nothing of it stays; the client's retry is a new request.
 */

/** Socket errors of a connection that failed or broke. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * PostgreSQL SQLSTATEs (Appendix A), besides class 08 (connection exceptions: 08000–08006, and
 * 08P01, which PgBouncer sends when it cannot reach a server: "server login has been failing",
 * "query_wait_timeout"):
 * - 57P01–57P03: shutting down, crashed, starting up or in recovery; 53300: too many connections;
 * - 25006: a write on a server that is read-only now (a primary brought back as a standby, or not
 *   yet promoted; Patroni does both at a failover);
 * - 40001 and 40P01: a serialization failure or deadlock, which PostgreSQL resolved by aborting this
 *   transaction, and which the same request, sent again, gets past; a standby cancelling a query
 *   that conflicts with recovery reports 40001 too.
 * SQLite's busy and locked file after its timeout.
 */
const DATABASE_CODES = new Set(['57P01', '57P02', '57P03', '53300', '25006', '40001', '40P01', 'SQLITE_BUSY', 'SQLITE_LOCKED']);

/** node-postgres reports some connection failures only in words. */
const MESSAGES = [/connection terminated/i, /not queryable/i, /database connection is not open/i, /timeout exceeded when trying to connect/i, /cannot use a pool after calling end/i, /driver not connected/i, /connection is not established/i];

interface ErrorLike {
  code?: unknown;
  message?: unknown;
  driverError?: unknown;
  cause?: unknown;
}

export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 3) return false;
  const { code, message, driverError, cause } = error as ErrorLike;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || DATABASE_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
  if (typeof message === 'string' && MESSAGES.some((pattern) => pattern.test(message))) return true;
  // TypeORM wraps the driver's error (QueryFailedError.driverError); Node wraps with `cause`.
  return isDatabaseUnavailable(driverError, depth + 1) || isDatabaseUnavailable(cause, depth + 1);
}

/** Seconds a client should wait before retrying while the database is away. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;
