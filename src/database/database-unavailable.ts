/**
 * Whether an error means "the database cannot be reached right now" rather than "this query is
 * wrong": the request then gets 503 temporarily_unavailable with Retry-After (the load balancer or
 * the client tries again; the instance recovers by itself when the database returns), not a 500.
 */

/** Socket errors of a connection that failed or broke. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * PostgreSQL SQLSTATEs (Appendix A): class 08 connection exceptions, 57P01–57P03 (shutting down,
 * crashed, starting up) and 53300 (too many connections). SQLite's busy and locked file after its timeout.
 */
const DATABASE_CODES = new Set(['08000', '08001', '08003', '08004', '08006', '57P01', '57P02', '57P03', '53300', 'SQLITE_BUSY', 'SQLITE_LOCKED']);

/** node-postgres reports some connection failures only in words. */
const MESSAGES = [/connection terminated/i, /database connection is not open/i, /timeout exceeded when trying to connect/i, /cannot use a pool after calling end/i, /driver not connected/i, /connection is not established/i];

interface ErrorLike {
  code?: unknown;
  message?: unknown;
  driverError?: unknown;
  cause?: unknown;
}

export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 3) return false;
  const { code, message, driverError, cause } = error as ErrorLike;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || DATABASE_CODES.has(code))) return true;
  if (typeof message === 'string' && MESSAGES.some((pattern) => pattern.test(message))) return true;
  // TypeORM wraps the driver's error (QueryFailedError.driverError); Node wraps with `cause`.
  return isDatabaseUnavailable(driverError, depth + 1) || isDatabaseUnavailable(cause, depth + 1);
}

/** Seconds a client should wait before retrying while the database is away. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;
