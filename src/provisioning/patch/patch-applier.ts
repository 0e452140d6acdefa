import { compileValueFilter } from '../filter/filter.compiler.js';
import type { Filter } from '../filter/filter.ast.js';
import { parsePatchPath } from '../filter/filter.parser.js';
import { isObject, type Resource } from '../filter/resource-path.js';
import { ScimError } from '../http/scim-error.js';
import { findAttribute, type AttributeDefinition } from '../schema/attribute.js';
import { isKnownSchema, resolvePath, type ResolvedPath, type ResourceTypeDefinition } from '../schema/resource-types.js';
import { SCIM_TYPE } from '../scim.constants.js';
import type { PatchOperation } from './patch-request.js';

/** Attributes a connector echoes back that change nothing (RFC 7644 §3.5.2: readOnly values are not the client's to set). */
const IGNORED = new Set(['schemas', 'id', 'meta']);

/**
 * Applies PATCH operations (RFC 7644 §3.5.2) to a copy of a representation and returns it; the
 * caller turns the result into a replacement, so a PATCH and a PUT obey the same rules. Operations
 * apply in order, and the request is atomic (§3.5.2: any failure leaves the resource unchanged).
 */
export function applyPatch(resource: Resource, operations: readonly PatchOperation[], type: ResourceTypeDefinition): Resource {
  const result = structuredClone(resource);
  for (const operation of operations) {
    if (operation.path === undefined) applyWithoutPath(result, operation, type);
    else applyAt(result, operation.op, operation.path, operation.value, type);
  }
  return result;
}

/** §3.5.2.1, §3.5.2.3: no path, the value is an object whose attributes are each added or replaced (Okta's `{"active": false}`). */
function applyWithoutPath(resource: Resource, { op, value }: PatchOperation, type: ResourceTypeDefinition): void {
  if (!isObject(value)) throw ScimError.badRequest(SCIM_TYPE.invalidValue, `${op} without a path takes an object of attributes as its value`);
  for (const [key, inner] of Object.entries(value)) {
    if (IGNORED.has(key.toLowerCase())) continue;
    // An extension written whole, `"urn:…:enterprise:2.0:User": {…}`: each of its attributes in turn.
    if (isKnownSchema(type, key) && key.toLowerCase() !== type.core.id.toLowerCase() && isObject(inner)) {
      for (const [name, extensionValue] of Object.entries(inner)) applyAt(resource, op, `${key}:${name}`, extensionValue, type);
    } else {
      // Entra ID writes keys as paths: "name.givenName", "urn:…:enterprise:2.0:User:department".
      applyAt(resource, op, key, inner, type);
    }
  }
}

function applyAt(resource: Resource, op: PatchOperation['op'], pathText: string, value: unknown, type: ResourceTypeDefinition): void {
  const { path, filter, subAfterFilter } = parsePatchPath(pathText);
  const resolved = resolvePath(type, path, SCIM_TYPE.invalidPath);
  assertMutable(resolved, pathText);
  const container = containerOf(resource, resolved, op !== 'remove');
  if (!container) return;
  if (resolved.definition.subAttributes && resolved.extension !== undefined && resolved.definition.name === resolved.extension) {
    // The extension itself as the path: merge or drop it whole.
    if (op === 'remove') delete resource[resolved.extension];
    else if (isObject(value)) for (const [name, inner] of Object.entries(value)) applyAt(resource, op, `${resolved.extension}:${name}`, inner, type);
    return;
  }
  const name = resolved.definition.name;
  if (filter) return applyFiltered(container, op, resolved.definition, filter, subAfterFilter, value);
  if (resolved.sub) return applySub(container, op, resolved.definition, resolved.sub.name, value);
  if (op === 'remove') return removeWhole(container, resolved.definition, value);
  if (resolved.definition.multiValued) {
    const values = (Array.isArray(value) ? value : [value]).map((element) => normalizeElement(element, resolved.definition));
    const current = op === 'add' && Array.isArray(container[name]) ? (container[name] as unknown[]) : [];
    container[name] = [...current, ...values.filter((element) => !current.some((existing) => sameValue(existing, element)))];
  } else if (resolved.definition.type === 'complex') {
    // §3.5.2.3: sub-attributes not named keep their values. Entra ID sends the manager as a bare id.
    if (typeof value === 'string' && findAttribute(resolved.definition.subAttributes, 'value')) value = { value };
    if (!isObject(value)) throw ScimError.badRequest(SCIM_TYPE.invalidValue, `${pathText} takes an object of sub-attributes`);
    container[name] = { ...(isObject(container[name]) ? container[name] : {}), ...canonicalKeys(value, resolved.definition) };
  } else {
    container[name] = value;
  }
}

/** `members[value eq "…"]`, `emails[type eq "work"].value`. */
function applyFiltered(container: Resource, op: PatchOperation['op'], definition: AttributeDefinition, filter: Filter, sub: string | undefined, value: unknown): void {
  if (!definition.multiValued || !definition.subAttributes) throw ScimError.badRequest(SCIM_TYPE.invalidPath, `${definition.name} is not multi-valued: it takes no value filter`);
  const subName = sub === undefined ? undefined : (findAttribute(definition.subAttributes, sub)?.name ?? fail(`${JSON.stringify(sub)} is not a sub-attribute of ${definition.name}`));
  const matches = compileValueFilter(filter, definition.name, definition.subAttributes);
  const elements = (Array.isArray(container[definition.name]) ? container[definition.name] : []) as Resource[];
  const selected = elements.filter((element) => isObject(element) && matches(element));
  if (op === 'remove') {
    container[definition.name] = subName === undefined ? elements.filter((element) => !selected.includes(element)) : elements.map((element) => (selected.includes(element) ? withoutKey(element, subName) : element));
    return;
  }
  if (selected.length === 0) {
    // Entra ID sends `Add emails[type eq "work"].value` for an address not there yet: the filter's equalities describe the new value.
    const seed = equalities(filter, definition);
    if (!seed) throw ScimError.badRequest(SCIM_TYPE.noTarget, `No value of ${definition.name} matches the filter`);
    const created = subName === undefined ? { ...seed, ...(isObject(value) ? canonicalKeys(value, definition) : {}) } : { ...seed, [subName]: value };
    container[definition.name] = [...elements, created];
    return;
  }
  for (const element of selected) {
    if (subName !== undefined) element[subName] = value;
    else if (isObject(value)) Object.assign(element, canonicalKeys(value, definition));
    else throw ScimError.badRequest(SCIM_TYPE.invalidValue, `Replacing values of ${definition.name} takes an object`);
  }
}

function applySub(container: Resource, op: PatchOperation['op'], definition: AttributeDefinition, subName: string, value: unknown): void {
  const current = container[definition.name];
  if (definition.multiValued) {
    const elements = (Array.isArray(current) ? current : []).filter(isObject);
    if (op === 'remove') container[definition.name] = elements.map((element) => withoutKey(element, subName));
    else container[definition.name] = elements.length === 0 ? [{ [subName]: value }] : elements.map((element) => ({ ...element, [subName]: value }));
    return;
  }
  const object = isObject(current) ? current : {};
  container[definition.name] = op === 'remove' ? withoutKey(object, subName) : { ...object, [subName]: value };
}

/** §3.5.2.2: remove the attribute; a value naming some of a multi-valued attribute's values removes just those (Entra ID's members). */
function removeWhole(container: Resource, definition: AttributeDefinition, value: unknown): void {
  if (definition.multiValued && value !== undefined) {
    const removed = (Array.isArray(value) ? value : [value]).map((element) => normalizeElement(element, definition));
    const current = Array.isArray(container[definition.name]) ? (container[definition.name] as unknown[]) : [];
    container[definition.name] = current.filter((existing) => !removed.some((element) => sameValue(existing, element)));
    return;
  }
  delete container[definition.name];
}

/** The equalities of an `eq` filter joined by `and`, as the value they describe; undefined for any other filter. */
function equalities(filter: Filter, definition: AttributeDefinition): Resource | undefined {
  if (filter.kind === 'and') {
    const [left, right] = [equalities(filter.left, definition), equalities(filter.right, definition)];
    return left && right ? { ...left, ...right } : undefined;
  }
  if (filter.kind !== 'compare' || filter.op !== 'eq' || filter.path.sub !== undefined || filter.path.schema !== undefined) return undefined;
  const sub = findAttribute(definition.subAttributes, filter.path.attr);
  return sub ? { [sub.name]: filter.value } : undefined;
}

function containerOf(resource: Resource, resolved: ResolvedPath, create: boolean): Resource | undefined {
  if (resolved.extension === undefined) return resource;
  if (!isObject(resource[resolved.extension])) {
    if (!create) return undefined;
    resource[resolved.extension] = {};
  }
  return resource[resolved.extension] as Resource;
}

function assertMutable(resolved: ResolvedPath, path: string): void {
  const definition = resolved.sub ?? resolved.definition;
  if (resolved.definition.mutability === 'readOnly' || definition.mutability === 'readOnly') throw ScimError.badRequest(SCIM_TYPE.mutability, `${path} is read-only`);
}

/** A value of a multi-valued attribute written as its bare value ("a@example.com") becomes `{ value }`; keys take their canonical case. */
function normalizeElement(element: unknown, definition: AttributeDefinition): unknown {
  if (definition.type !== 'complex') return element;
  return isObject(element) ? canonicalKeys(element, definition) : { value: element };
}

function canonicalKeys(value: Resource, definition: AttributeDefinition): Resource {
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [findAttribute(definition.subAttributes, key)?.name ?? key, inner]));
}

/** Two values of a multi-valued attribute are the same when their `value`s are (a member added twice is one member). */
function sameValue(a: unknown, b: unknown): boolean {
  if (isObject(a) && isObject(b) && 'value' in a && 'value' in b) return a.value === b.value && (a.type === undefined || b.type === undefined || a.type === b.type);
  return JSON.stringify(a) === JSON.stringify(b);
}

function withoutKey(object: Resource, key: string): Resource {
  const { [key]: _removed, ...rest } = object;
  return rest;
}

function fail(detail: string): never {
  throw ScimError.badRequest(SCIM_TYPE.invalidPath, detail);
}

