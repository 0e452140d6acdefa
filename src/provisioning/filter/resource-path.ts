import type { ResolvedPath } from '../schema/resource-types.js';

/** A resource's representation as SCIM writes it (RFC 7643 §3): core attributes at the top, an extension's under its URN. */
export type Resource = Record<string, unknown>;

/**
 * The values a resolved path reads from a representation, flattened: a multi-valued attribute gives
 * each value (or each value's sub-attribute), a complex one compared whole gives its `value`.
 * Missing and null values are left out.
 */
export function readPath(resource: Resource, { extension, definition, sub }: ResolvedPath): unknown[] {
  const container = extension === undefined ? resource : (resource[extension] as Resource | undefined);
  if (!container || typeof container !== 'object') return [];
  const raw = container[definition.name];
  const values = definition.multiValued ? (Array.isArray(raw) ? raw : []) : [raw];
  const picked = sub !== undefined ? values.map((value) => (isObject(value) ? value[sub.name] : undefined)) : definition.type === 'complex' ? values.map((value) => (isObject(value) && 'value' in value ? value.value : value)) : values;
  return picked.filter((value) => value !== undefined && value !== null);
}

export function isObject(value: unknown): value is Resource {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The values of a (multi-valued) complex attribute as objects: what a value filter runs over. */
export function elementsAt(resource: Resource, { extension, definition }: ResolvedPath): Resource[] {
  const container = extension === undefined ? resource : resource[extension];
  if (!isObject(container)) return [];
  const raw = container[definition.name];
  return (Array.isArray(raw) ? raw : [raw]).filter(isObject);
}
