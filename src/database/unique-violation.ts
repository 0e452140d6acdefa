/**
 * Whether a failed INSERT broke a unique index: PostgreSQL's SQLSTATE 23505, SQLite's
 * SQLITE_CONSTRAINT_UNIQUE, on the error itself or the driver's error TypeORM wraps.
 */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, driverError } = error as { code?: unknown; driverError?: unknown };
  if (code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE') return true;
  return driverError !== undefined && driverError !== error && isUniqueViolation(driverError);
}
