import { isObject, type Resource } from '../filter/resource-path.js';
import { ScimError } from '../http/scim-error.js';
import { findAttribute, type AttributeDefinition } from '../schema/attribute.js';
import { SCIM_TYPE } from '../scim.constants.js';

/** Bounds on what a directory may store per attribute: generous for any directory, small enough to refuse abuse. */
const MAX_STRING = 2048;
const MAX_VALUES = 100;

/**
 * A value checked against its definition (RFC 7643 §2.3) and made canonical: sub-attribute names in
 * their schema's case, booleans from Entra ID's "True"/"False" strings, a single value of a
 * multi-valued attribute wrapped in an array. Read-only sub-attributes are dropped (RFC 7644
 * §3.5.1: the client's values for them are ignored); anything else unknown is 400 invalidValue.
 */
export function checkValue(definition: AttributeDefinition, value: unknown, path: string): unknown {
  if (value === null) return null;
  if (definition.multiValued) {
    const values = Array.isArray(value) ? value : [value];
    if (values.length > MAX_VALUES) throw invalid(`${path} has more than ${MAX_VALUES} values`);
    return values.map((element, index) => checkSingle(definition, element, `${path}[${index}]`)).filter((element) => element !== null);
  }
  return checkSingle(definition, value, path);
}

function checkSingle(definition: AttributeDefinition, value: unknown, path: string): unknown {
  switch (definition.type) {
    case 'boolean':
      return asBoolean(value, path);
    case 'complex':
      return checkComplex(definition, value, path);
    case 'integer':
    case 'decimal':
      if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(`${path} is a number`);
      return value;
    default:
      if (typeof value !== 'string') throw invalid(`${path} is a string`);
      if (value.length > MAX_STRING) throw invalid(`${path} is longer than ${MAX_STRING} characters`);
      return value;
  }
}

function checkComplex(definition: AttributeDefinition, value: unknown, path: string): Resource | null {
  // A bare value for a complex attribute names its `value` (Entra ID's manager as a plain id).
  const object = isObject(value) ? value : typeof value === 'string' && findAttribute(definition.subAttributes, 'value') ? { value } : undefined;
  if (!object) throw invalid(`${path} is an object`);
  const checked: Resource = {};
  for (const [key, inner] of Object.entries(object)) {
    const sub = findAttribute(definition.subAttributes, key);
    if (!sub) throw invalid(`${path}.${key} is not an attribute`);
    if (sub.mutability === 'readOnly' || inner === null || inner === undefined) continue;
    checked[sub.name] = checkValue(sub, inner, `${path}.${sub.name}`);
  }
  return Object.keys(checked).length === 0 ? null : checked;
}

/** RFC 7643 §2.3.2 booleans; Entra ID sends "True" and "False" as strings in PATCH values. */
export function asBoolean(value: unknown, path: string): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  throw invalid(`${path} is true or false`);
}

export function invalid(detail: string): ScimError {
  return ScimError.badRequest(SCIM_TYPE.invalidValue, detail);
}
