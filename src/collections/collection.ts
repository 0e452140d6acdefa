import type { ValidateFunction } from 'ajv';

/** How an attribute is stored and compared in the database, derived from its JSON Schema. */
export enum AttributeKind {
  String = 'string',
  Boolean = 'boolean',
  Integer = 'integer',
  Number = 'number',
  /** An array of strings: a filter matches items whose array contains the value. */
  StringArray = 'string-array',
  /** A string of format date-time, stored normalised to UTC so that equal instants are equal text and text order is time order. */
  DateTime = 'date-time',
}

export interface Attribute {
  name: string;
  /** Undefined for shapes the database does not compare (objects, arrays of non-strings). */
  kind?: AttributeKind;
  /** The attribute's own JSON Schema, as declared. */
  schema: Record<string, unknown>;
  writable: boolean;
  filterable: boolean;
  sortable: boolean;
}

/** Fields Latchkey manages on every item; clients read them and never write them. */
export const SERVER_MANAGED_FIELDS = ['id', 'createdAt', 'updatedAt'] as const;

/** A collection declared in the collections file, checked and ready to serve. */
export interface Collection {
  /** Validates a complete item body (without the server-managed fields). */
  validate: ValidateFunction;
  /** Plural noun, the path segment: /api/v1/<name>. */
  name: string;
  description: string;
  /** The item schema as declared, with additionalProperties forced to false. */
  schema: Record<string, unknown>;
  attributes: ReadonlyMap<string, Attribute>;
  readScope: string;
  writeScope: string;
}
