import { isDeepStrictEqual } from 'node:util';
import { describeSchemaErrors } from '../../collections/json-schema-validator.js';
import { AttributeKind, SERVER_MANAGED_FIELDS, type Collection } from '../../collections/collection.js';
import { normalizeDateTime } from './date-time.js';
import type { Item } from '../../items/item.entity.js';
import { ApiError } from '../../http/api-error.js';
import { toResource } from './item-representation.js';
import { applyMergePatch } from './json-merge-patch.js';
import { isStorableJson } from '../../common/storable-text.js';

const MANAGED = new Set<string>(SERVER_MANAGED_FIELDS);

/**
 * The attributes a write stores, checked against the collection. Server-managed fields may be
 * echoed back unchanged (a client PUTs what it GOT) but never changed; non-writable attributes
 * likewise; the result must satisfy the schema, whose additionalProperties is false.
 */
export class ItemAttributes {
  /** POST: a new item from the body. */
  static forCreate(collection: Collection, body: Record<string, unknown>): Record<string, unknown> {
    return checked(collection, stripManaged(body, undefined), undefined);
  }

  /** PUT: a complete replacement; attributes left out are removed. */
  static forReplace(collection: Collection, body: Record<string, unknown>, current: Item): Record<string, unknown> {
    return checked(collection, stripManaged(body, current), current);
  }

  /** PATCH: the current attributes with an RFC 7396 merge patch applied. */
  static forMergePatch(collection: Collection, patch: Record<string, unknown>, current: Item): Record<string, unknown> {
    const merged = applyMergePatch(current.data, stripManaged(patch, current)) as Record<string, unknown>;
    return checked(collection, merged, current);
  }
}

function stripManaged(body: Record<string, unknown>, current: Item | undefined): Record<string, unknown> {
  const representation = current ? toResource(current) : {};
  const attributes: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) {
    if (!MANAGED.has(name)) attributes[name] = value;
    else if (!current || !isDeepStrictEqual(representation[name], value)) {
      throw new ApiError(400, `"${name}" is managed by the server and cannot be written`);
    }
  }
  return attributes;
}

function checked(collection: Collection, data: Record<string, unknown>, current: Item | undefined): Record<string, unknown> {
  for (const attribute of collection.attributes.values()) {
    if (attribute.writable) continue;
    if (!isDeepStrictEqual(data[attribute.name], current?.data[attribute.name])) {
      throw new ApiError(400, `"${attribute.name}" is read-only`);
    }
  }
  if (!collection.validate(data)) {
    throw new ApiError(400, `The ${collection.name} item is invalid: ${describeSchemaErrors(collection.validate.errors)}`);
  }
  if (!isStorableJson(data)) throw new ApiError(400, 'Text must be valid Unicode without NUL characters');
  for (const attribute of collection.attributes.values()) {
    const value = data[attribute.name];
    if (attribute.kind === AttributeKind.DateTime && typeof value === 'string') data[attribute.name] = normalizeDateTime(value) ?? value;
  }
  return data;
}
