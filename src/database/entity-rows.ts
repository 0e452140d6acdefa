import type { EntityMetadata } from 'typeorm';
import { rowDate } from './prepared-statement.js';

type Decode = (value: unknown) => unknown;

/** How a column's value comes back from the drivers when read without TypeORM, by column type. */
const DECODERS: Record<string, Decode> = {
  // SQLite returns the DATETIME text TypeORM wrote; PostgreSQL's timestamptz is a Date already.
  datetime: (value) => (value === null ? null : rowDate(value as Date | string)),
  timestamptz: (value) => value,
  // SQLite keeps booleans as 0/1.
  boolean: (value) => (typeof value === 'number' ? value !== 0 : value),
  // simple-json columns are text on both databases.
  'simple-json': (value) => (typeof value === 'string' ? JSON.parse(value) : value),
};

/**
 * An entity's rows for plain SQL, derived once from its TypeORM metadata: the SELECT list that
 * names each column by its property (`"token_hash" AS "tokenHash"`), and the decoding of what the
 * drivers return (dates, booleans, JSON text). Built at start-up; a row costs one pass over the
 * few columns that need decoding.
 */
export class EntityRows<T> {
  /** `"table"` */
  readonly table: string;
  /** Every column, aliased to its property name. */
  readonly selectList: string;
  /** The same, each column named with its table (`"users"."id" AS "id"`), for a SELECT that joins other tables. */
  readonly qualifiedSelectList: string;
  private readonly decoders: [string, Decode][];
  private readonly Entity: new () => object;

  constructor(metadata: EntityMetadata) {
    if (typeof metadata.target !== 'function') throw new Error(`${metadata.name} is not an entity class`);
    this.Entity = metadata.target as new () => object;
    this.table = `"${metadata.tableName}"`;
    this.selectList = metadata.columns.map((column) => (column.databaseName === column.propertyName ? `"${column.databaseName}"` : `"${column.databaseName}" AS "${column.propertyName}"`)).join(', ');
    this.qualifiedSelectList = metadata.columns.map((column) => `${this.table}."${column.databaseName}" AS "${column.propertyName}"`).join(', ');
    this.decoders = metadata.columns.flatMap((column): [string, Decode][] => {
      const decode = DECODERS[String(column.type)];
      return decode ? [[column.propertyName, decode]] : [];
    });
  }

  /** A row, as the drivers return it for `SELECT ${selectList}`, as an entity instance. */
  decode(row: Record<string, unknown>): T {
    const entity = Object.assign(new this.Entity(), row) as Record<string, unknown>;
    for (const [property, decode] of this.decoders) entity[property] = decode(row[property]);
    return entity as T;
  }
}
