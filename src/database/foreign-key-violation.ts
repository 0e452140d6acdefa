/**
 * Whether a failed write named a row that is gone: PostgreSQL's SQLSTATE 23503, SQLite's
 * SQLITE_CONSTRAINT_FOREIGNKEY, on the error itself or the driver's error TypeORM wraps. A request
 * that read a client or a person and then wrote a row naming it meets this when that client or
 * person was deleted in between: the request's own input was fine, so it is refused, not a 500.
 */
export function isForeignKeyViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, driverError } = error as { code?: unknown; driverError?: unknown };
  if (code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY') return true;
  return driverError !== undefined && driverError !== error && isForeignKeyViolation(driverError);
}
