import { createHash } from 'node:crypto';

/**
 * How a column's values travel from SQLite to PostgreSQL and how both sides are compared. The
 * target's column type decides (the schema both databases got from the same migrations): SQLite
 * keeps instants as UTC text, booleans as 0/1 and JSON as text, where PostgreSQL has timestamptz,
 * boolean and jsonb.
 */
export type ColumnKind = 'text' | 'uuid' | 'integer' | 'boolean' | 'timestamp' | 'json';

/** The kind of a PostgreSQL column from its udt_name, or undefined for a type the copy does not know. */
export function columnKindOf(udtName: string): ColumnKind | undefined {
  switch (udtName) {
    case 'varchar':
    case 'text':
    case 'bpchar':
      return 'text';
    case 'uuid':
      return 'uuid';
    case 'int2':
    case 'int4':
    case 'int8':
      return 'integer';
    case 'bool':
      return 'boolean';
    case 'timestamptz':
    case 'timestamp':
      return 'timestamp';
    case 'json':
    case 'jsonb':
      return 'json';
    default:
      return undefined;
  }
}

/** An instant as SQLite holds it: TypeORM writes UTC without a zone ("2026-11-27 06:45:38.123"), datetime('now') the same without milliseconds. */
function sqliteInstant(text: string): Date {
  const zoned = /(Z|[+-]\d{2}(:?\d{2})?)$/.test(text);
  const instant = new Date(`${text.replace(' ', 'T')}${zoned ? '' : 'Z'}`);
  if (Number.isNaN(instant.getTime())) throw new Error(`"${text}" is not an instant`);
  return instant;
}

/** JSON with its keys sorted at every level: jsonb reorders keys and drops whitespace, so both sides are compared in this form. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${stableJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The text PostgreSQL is given for a SQLite value (cast to the column's type in the INSERT), or null. */
export function targetParameter(kind: ColumnKind, value: unknown): string | null {
  if (value === null || value === undefined) return null;
  switch (kind) {
    case 'boolean':
      return Number(value) !== 0 ? 'true' : 'false';
    case 'timestamp':
      return typeof value === 'string' ? sqliteInstant(value).toISOString() : new Date(Number(value)).toISOString();
    default:
      return String(value);
  }
}

/**
 * The one canonical text of a value, whichever side read it: the SQLite value as stored, or the
 * PostgreSQL value as node-postgres returns it (Date, boolean, a parsed jsonb, int8 as a string).
 */
export function canonicalValue(kind: ColumnKind, value: unknown): string | null {
  if (value === null || value === undefined) return null;
  switch (kind) {
    case 'boolean':
      return typeof value === 'boolean' ? String(value) : Number(value) !== 0 ? 'true' : 'false';
    case 'timestamp':
      return value instanceof Date ? value.toISOString() : sqliteInstant(String(value)).toISOString();
    case 'json':
      return stableJson(typeof value === 'string' ? JSON.parse(value) : value);
    case 'uuid':
      return String(value).toLowerCase();
    default:
      return String(value);
  }
}

const MODULUS = 1n << 256n;

/**
 * A table's row count and checksum: the sum, modulo 2^256, of each row's SHA-256 over its
 * canonical values. A sum does not depend on the order rows are read in, so the two databases'
 * different orders (SQLite compares text bytewise, PostgreSQL by its collation) do not matter;
 * a row missing, added or changed on either side changes it.
 */
export class TableChecksum {
  private sum = 0n;
  rows = 0;

  constructor(private readonly kinds: readonly ColumnKind[]) {}

  add(row: readonly unknown[]): void {
    const canonical = row.map((value, index) => canonicalValue(this.kinds[index], value));
    const digest = createHash('sha256').update(JSON.stringify(canonical), 'utf8').digest('hex');
    this.sum = (this.sum + BigInt(`0x${digest}`)) % MODULUS;
    this.rows++;
  }

  get digest(): string {
    return this.sum.toString(16).padStart(64, '0');
  }
}
