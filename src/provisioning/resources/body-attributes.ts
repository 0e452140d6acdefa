import { isObject, type Resource } from '../filter/resource-path.js';
import { ScimError } from '../http/scim-error.js';
import { findAttribute, type AttributeDefinition } from '../schema/attribute.js';
import { COMMON_ATTRIBUTES, type ResourceTypeDefinition } from '../schema/resource-types.js';
import { SCIM_TYPE } from '../scim.constants.js';
import { checkValue } from './value-checks.js';

/** A resource's writable attributes as a body gave them, checked and keyed by canonical name; extensions by URN. */
export interface BodyAttributes {
  core: Resource;
  extensions: Record<string, Resource>;
}

/**
 * The attributes of a POST or PUT body, or of a representation a PATCH produced (RFC 7644 §3.3,
 * §3.5.1): `schemas` must name the resource's core schema; every attribute
 * must be one of the schemas' (400 invalidSyntax otherwise); read-only attributes (id, meta, groups)
 * are ignored (§3.5.1); each value is checked against its definition.
 */
export function bodyAttributes(body: Resource, type: ResourceTypeDefinition): BodyAttributes {
  const schemas = body.schemas;
  if (!Array.isArray(schemas) || !schemas.every((schema) => typeof schema === 'string')) throw ScimError.badRequest(SCIM_TYPE.invalidSyntax, `The body declares its "schemas", among them "${type.core.id}"`);
  if (!schemas.some((schema) => schema.toLowerCase() === type.core.id.toLowerCase())) throw ScimError.badRequest(SCIM_TYPE.invalidSyntax, `"schemas" must include "${type.core.id}"`);
  // Schemas we do not know are tolerated in the list (Entra ID names its own ADSCIM schema on every
  // group) as long as the body holds no attribute of theirs: those are refused below.
  const result: BodyAttributes = { core: {}, extensions: {} };
  for (const [key, value] of Object.entries(body)) {
    if (key === 'schemas') continue;
    const extension = type.extensions.find((candidate) => candidate.id.toLowerCase() === key.toLowerCase());
    if (extension) {
      if (!isObject(value)) throw ScimError.badRequest(SCIM_TYPE.invalidValue, `${extension.id} is an object`);
      result.extensions[extension.id] = checkAll(value, extension.attributes, extension.id);
      continue;
    }
    const definition = findAttribute(type.core.attributes, key) ?? findAttribute(COMMON_ATTRIBUTES, key);
    if (!definition) throw ScimError.badRequest(SCIM_TYPE.invalidSyntax, `${JSON.stringify(key)} is not an attribute of ${type.name}`);
    if (definition.mutability === 'readOnly' || value === undefined) continue;
    result.core[definition.name] = checkValue(definition, value, definition.name);
  }
  return result;
}

function checkAll(object: Resource, attributes: AttributeDefinition[], prefix: string): Resource {
  const checked: Resource = {};
  for (const [key, value] of Object.entries(object)) {
    const definition = findAttribute(attributes, key);
    if (!definition) throw ScimError.badRequest(SCIM_TYPE.invalidSyntax, `${JSON.stringify(`${prefix}:${key}`)} is not an attribute`);
    if (definition.mutability === 'readOnly' || value === undefined) continue;
    checked[definition.name] = checkValue(definition, value, `${prefix}:${definition.name}`);
  }
  return checked;
}
