import { ScimError } from '../http/scim-error.js';
import type { AttrPath } from '../filter/filter.ast.js';
import { SCHEMA, type ScimType } from '../scim.constants.js';
import { attribute, complex, findAttribute, text, type AttributeDefinition, type SchemaDefinition } from './attribute.js';
import { GROUP_SCHEMA } from './group.schema.js';
import { ENTERPRISE_USER_SCHEMA, USER_SCHEMA } from './user.schema.js';

/** RFC 7643 §6: a resource type, its endpoint and its schemas. */
export interface ResourceTypeDefinition {
  name: 'User' | 'Group';
  endpoint: '/Users' | '/Groups';
  description: string;
  core: SchemaDefinition;
  extensions: SchemaDefinition[];
}

export const USER_RESOURCE: ResourceTypeDefinition = { name: 'User', endpoint: '/Users', description: 'User Account', core: USER_SCHEMA, extensions: [ENTERPRISE_USER_SCHEMA] };
export const GROUP_RESOURCE: ResourceTypeDefinition = { name: 'Group', endpoint: '/Groups', description: 'Group', core: GROUP_SCHEMA, extensions: [] };

/** RFC 7643 §3.1: attributes of every resource, outside any schema's list. */
export const COMMON_ATTRIBUTES: AttributeDefinition[] = [
  text('id', 'Unique identifier assigned by the service provider.', { caseExact: true, mutability: 'readOnly', returned: 'always', uniqueness: 'server' }),
  text('externalId', "The provisioning client's identifier for the resource.", { caseExact: true }),
  complex(
    'meta',
    'Resource metadata.',
    [
      text('resourceType', 'The name of the resource type.', { caseExact: true, mutability: 'readOnly' }),
      attribute('created', 'dateTime', 'When the resource was added.', { mutability: 'readOnly' }),
      attribute('lastModified', 'dateTime', 'When the resource was last changed.', { mutability: 'readOnly' }),
      attribute('location', 'reference', 'The URI of the resource.', { caseExact: true, mutability: 'readOnly', referenceTypes: ['uri'] }),
      text('version', 'The version (ETag) of the resource.', { caseExact: true, mutability: 'readOnly' }),
    ],
    { mutability: 'readOnly' },
  ),
];

/** An attribute path resolved against a resource type: where it lives in a representation, and what it is. */
export interface ResolvedPath {
  /** The extension URN the attribute lives under; undefined for core and common attributes (top level). */
  extension?: string;
  definition: AttributeDefinition;
  sub?: AttributeDefinition;
}

/**
 * Resolves `path` (names in any case, RFC 7643 §2.1) against the type's schemas: the core schema
 * and the common attributes without a URN (or with the core URN), an extension's with its URN. An
 * unknown attribute is 400 with `errorType` (invalidFilter in a filter, invalidPath in a PATCH).
 * A path naming just an extension's URN resolves to the extension as a complex attribute.
 */
export function resolvePath(type: ResourceTypeDefinition, path: AttrPath, errorType: ScimType): ResolvedPath {
  const written = `${path.schema ? `${path.schema}:` : ''}${path.attr}${path.sub ? `.${path.sub}` : ''}`;
  const unknown = (): ScimError => ScimError.badRequest(errorType, `${JSON.stringify(written)} is not an attribute of ${type.name}`);
  let definition: AttributeDefinition | undefined;
  let extension: string | undefined;
  const schema = path.schema?.toLowerCase();
  if (schema === undefined || schema === type.core.id.toLowerCase()) {
    definition = findAttribute(type.core.attributes, path.attr) ?? findAttribute(COMMON_ATTRIBUTES, path.attr);
  } else {
    const found = type.extensions.find((candidate) => candidate.id.toLowerCase() === schema);
    if (!found) {
      // `urn:…:enterprise:2.0:User` itself: parseAttrPath split its last segment ("User") off as a name.
      const whole = type.extensions.find((candidate) => candidate.id.toLowerCase() === `${schema}:${path.attr.toLowerCase()}`);
      if (whole && path.sub === undefined) return { extension: whole.id, definition: extensionAsAttribute(whole) };
      throw unknown();
    }
    extension = found.id;
    definition = findAttribute(found.attributes, path.attr);
  }
  if (!definition) throw unknown();
  if (path.sub === undefined) return { extension, definition };
  const sub = findAttribute(definition.subAttributes, path.sub);
  if (!sub) throw unknown();
  return { extension, definition, sub };
}

/** The key of an extension in a representation; an extension's attributes are its sub-attributes. */
export function extensionAsAttribute(schema: SchemaDefinition): AttributeDefinition {
  return complex(schema.id, schema.description, schema.attributes);
}

/** A resource type by its schema URN; for /Schemas and the schemas a body declares. */
export function isKnownSchema(type: ResourceTypeDefinition, urn: string): boolean {
  const lower = urn.toLowerCase();
  return type.core.id.toLowerCase() === lower || type.extensions.some((extension) => extension.id.toLowerCase() === lower);
}

export const ALL_SCHEMAS: SchemaDefinition[] = [USER_SCHEMA, ENTERPRISE_USER_SCHEMA, GROUP_SCHEMA];
export { SCHEMA };
