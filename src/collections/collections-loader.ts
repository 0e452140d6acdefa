import type { ValidateFunction } from 'ajv';
import { readFileSync } from 'node:fs';
import { AttributeKind, SERVER_MANAGED_FIELDS, type Attribute, type Collection } from './collection.js';
import { COLLECTIONS_FILE_SCHEMA } from './collections-file.schema.js';
import { createAjv, describeSchemaErrors } from './json-schema-validator.js';

/** The collections file is wrong: start-up stops with this message, which names the problem. */
export class CollectionsFileError extends Error {
  constructor(file: string, problem: string) {
    super(`Invalid collections file ${file}:\n  - ${problem}`);
    this.name = 'CollectionsFileError';
  }
}

interface DeclaredCollection {
  description?: string;
  schema: { type: 'object'; properties: Record<string, Record<string, unknown>>; required?: string[]; additionalProperties?: false };
  writable?: string[];
  filterable?: string[];
  sortable?: string[];
}

/**
 * When each collection's item schema is compiled: `now` checks every schema as the file is read
 * (the server's start-up, which must stop on a schema that does not compile); `on first use` when
 * an item is first validated (the registry: the CLI never validates an item, and compiling the
 * schemas, JSON Schema's own meta-schema first, was a tenth of a CLI call's time; issue 49).
 */
export type SchemaCompilation = 'now' | 'on first use';

/** Reads, checks and compiles the collections file; throws CollectionsFileError on any problem. */
export function loadCollections(file: string, compilation: SchemaCompilation = 'now'): Map<string, Collection> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new CollectionsFileError(file, messageOf(error));
  }
  // The file's shape is our own schema, whose validity the unit tests prove: compiled without
  // checking it against the meta-schema, which only the declared item schemas need.
  const checkShape = createAjv({ validateSchema: false }).compile(COLLECTIONS_FILE_SCHEMA);
  if (!checkShape(parsed)) throw new CollectionsFileError(file, describeSchemaErrors(checkShape.errors));

  const ajv = createAjv();
  const declared = (parsed as { collections: Record<string, DeclaredCollection> }).collections;
  const collections = new Map<string, Collection>();
  for (const [name, declaration] of Object.entries(declared)) {
    try {
      collections.set(name, buildCollection(name, declaration, ajv, compilation));
    } catch (error) {
      throw new CollectionsFileError(file, `collection "${name}": ${messageOf(error)}`);
    }
  }
  return collections;
}

function buildCollection(name: string, declared: DeclaredCollection, ajv: ReturnType<typeof createAjv>, compilation: SchemaCompilation): Collection {
  const properties = declared.schema.properties;
  const names = Object.keys(properties);
  for (const field of SERVER_MANAGED_FIELDS) {
    if (field in properties) throw new Error(`"${field}" is managed by the server and cannot be declared`);
  }
  const writable = new Set(declared.writable ?? names);
  const filterable = new Set(declared.filterable ?? []);
  const sortable = new Set(declared.sortable ?? []);
  for (const [list, entries] of [['writable', writable], ['filterable', filterable], ['sortable', sortable]] as const) {
    for (const entry of entries) if (!(entry in properties)) throw new Error(`${list} names "${entry}", which the schema does not declare`);
  }
  for (const required of declared.schema.required ?? []) {
    if (!(required in properties)) throw new Error(`required names "${required}", which the schema does not declare`);
    if (!writable.has(required)) throw new Error(`"${required}" is required but not writable, so no item could ever be created`);
  }

  const attributes = new Map<string, Attribute>();
  for (const attribute of names) {
    const schema = properties[attribute];
    const kind = attributeKind(schema);
    if (filterable.has(attribute) && kind === undefined) throw new Error(`"${attribute}" cannot be filterable: only strings, numbers, booleans and arrays of strings can`);
    if (sortable.has(attribute) && (kind === undefined || kind === AttributeKind.StringArray)) throw new Error(`"${attribute}" cannot be sortable: only strings, numbers and booleans can`);
    attributes.set(attribute, { name: attribute, kind, schema, writable: writable.has(attribute), filterable: filterable.has(attribute), sortable: sortable.has(attribute) });
  }

  // Unknown attributes are rejected (issue #3): the item schema is closed whatever the file says.
  const schema = { ...declared.schema, additionalProperties: false };
  const compile = (): ValidateFunction => {
    try {
      return ajv.compile(schema);
    } catch (error) {
      throw new Error(`schema does not compile: ${messageOf(error)}`, { cause: error });
    }
  };
  let validate = compilation === 'now' ? compile() : undefined;
  return {
    name,
    description: declared.description ?? name,
    schema,
    attributes,
    get validate() {
      return (validate ??= compile());
    },
    readScope: `${name}:read`,
    writeScope: `${name}:write`,
  };
}

function attributeKind(schema: Record<string, unknown>): AttributeKind | undefined {
  switch (schema.type) {
    case 'string':
      return schema.format === 'date-time' ? AttributeKind.DateTime : AttributeKind.String;
    case 'boolean':
      return AttributeKind.Boolean;
    case 'integer':
      return AttributeKind.Integer;
    case 'number':
      return AttributeKind.Number;
    case 'array': {
      const items = schema.items as Record<string, unknown> | undefined;
      return items?.type === 'string' ? AttributeKind.StringArray : undefined;
    }
    default:
      return undefined;
  }
}

/** The message of anything thrown (a fs or JSON error may come from another realm, so no instanceof). */
function messageOf(error: unknown): string {
  return typeof error === 'object' && error !== null && 'message' in error ? String(error.message) : String(error);
}
