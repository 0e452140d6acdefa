import { DATABASE_DIALECT } from '../config/database.config.js';

/**
 * Portable column types. PostgreSQL gets its native timestamptz (instants, independent of each
 * instance's time zone) and uuid; SQLite stores ISO datetimes and UUID strings.
 */
export const TIMESTAMP = DATABASE_DIALECT === 'postgres' ? 'timestamptz' : 'datetime';
export const UUID = DATABASE_DIALECT === 'postgres' ? 'uuid' : 'varchar';
export const UUID_LENGTH = DATABASE_DIALECT === 'postgres' ? undefined : 36;
