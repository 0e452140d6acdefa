/**
 * Whether a failed statement carries one of `codes` (PostgreSQL's SQLSTATE, SQLite's extended
 * result code), on the error itself or the driver's error TypeORM wraps.
 */
export function hasDriverErrorCode(error: unknown, codes: readonly string[]): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, driverError } = error as { code?: unknown; driverError?: unknown };
  if (typeof code === 'string' && codes.includes(code)) return true;
  return driverError !== undefined && driverError !== error && hasDriverErrorCode(driverError, codes);
}

/**
 * Whether a failed INSERT broke a unique index or a primary key: PostgreSQL's SQLSTATE 23505 (both),
 * SQLite's SQLITE_CONSTRAINT_UNIQUE and SQLITE_CONSTRAINT_PRIMARYKEY.
 */
export function isUniqueViolation(error: unknown): boolean {
  return hasDriverErrorCode(error, ['23505', 'SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY']);
}
