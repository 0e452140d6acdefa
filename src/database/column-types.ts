import { DATABASE_DIALECT } from '../config/database.config.js';

/**
 * Portable column types. PostgreSQL gets its native timestamptz (instants, independent of each
 * instance's time zone) and uuid; SQLite stores ISO datetimes and UUID strings.
 */
export const TIMESTAMP = DATABASE_DIALECT === 'postgres' ? 'timestamptz' : 'datetime';
export const UUID = DATABASE_DIALECT === 'postgres' ? 'uuid' : 'varchar';
export const UUID_LENGTH = DATABASE_DIALECT === 'postgres' ? undefined : 36;
/** A JSON document: jsonb on PostgreSQL (indexable expressions), JSON text on SQLite (json_extract). */
export const JSON_DOCUMENT = DATABASE_DIALECT === 'postgres' ? 'jsonb' : 'simple-json';
