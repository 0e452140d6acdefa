import type { Collection } from '../../collections/collection.js';

/** The OPTIONS body: which attributes a client may change, with their JSON Schema, and which are required. */
export function writableAttributes(collection: Collection): Record<string, unknown> {
  const attributes: Record<string, unknown> = {};
  for (const attribute of collection.attributes.values()) if (attribute.writable) attributes[attribute.name] = attribute.schema;
  return {
    collection: collection.name,
    attributes,
    required: (collection.schema.required as string[] | undefined) ?? [],
    readOnly: ['id', 'createdAt', 'updatedAt', ...[...collection.attributes.values()].filter((a) => !a.writable).map((a) => a.name)],
  };
}
