import { hasDriverErrorCode } from './unique-violation.js';

/**
 * Whether a failed write named a row that is gone: PostgreSQL's SQLSTATE 23503, SQLite's
 * SQLITE_CONSTRAINT_FOREIGNKEY. A request that read a client or a person and then wrote a row
 * naming it meets this when that client or person was deleted in between: the request's own input
 * was fine, so it is refused, not a 500.
 */
export function isForeignKeyViolation(error: unknown): boolean {
  return hasDriverErrorCode(error, ['23503', 'SQLITE_CONSTRAINT_FOREIGNKEY']);
}
