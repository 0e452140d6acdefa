import { ScimError } from '../http/scim-error.js';
import { findAttribute, type AttributeDefinition } from '../schema/attribute.js';
import { resolvePath, type ResourceTypeDefinition } from '../schema/resource-types.js';
import { SCIM_TYPE } from '../scim.constants.js';
import type { AttrPath, CompValue, CompareOperator, Filter } from './filter.ast.js';
import { elementsAt, readPath, type Resource } from './resource-path.js';

export type Predicate = (resource: Resource) => boolean;

/** Where a path's values are read from, and the attribute whose type and caseExact the comparison uses. */
interface Operand {
  read(target: Resource): unknown[];
  definition: AttributeDefinition;
}

type Resolver = (path: AttrPath) => Operand;

/**
 * Compiles a filter (RFC 7644 §3.4.2.2) into a predicate over a resource's representation. Every
 * attribute is resolved and every operator checked against its type first, so a filter naming an
 * unknown attribute, or comparing a boolean with `gt`, is 400 invalidFilter even when nothing would match.
 */
export function compileFilter(filter: Filter, type: ResourceTypeDefinition): Predicate {
  const resolve: Resolver = (path) => {
    const resolved = resolvePath(type, path, SCIM_TYPE.invalidFilter);
    return { read: (target) => readPath(target, resolved), definition: comparedDefinition(resolved.sub ?? resolved.definition) };
  };
  return compile(filter, resolve, type);
}

function compile(filter: Filter, resolve: Resolver, type?: ResourceTypeDefinition): Predicate {
  switch (filter.kind) {
    case 'and': {
      const [left, right] = [compile(filter.left, resolve, type), compile(filter.right, resolve, type)];
      return (resource) => left(resource) && right(resource);
    }
    case 'or': {
      const [left, right] = [compile(filter.left, resolve, type), compile(filter.right, resolve, type)];
      return (resource) => left(resource) || right(resource);
    }
    case 'not': {
      const inner = compile(filter.filter, resolve, type);
      return (resource) => !inner(resource);
    }
    case 'present': {
      const operand = resolve(filter.path);
      // §3.4.2.2 "pr": a non-empty value; an empty string or array is no value (RFC 7643 §2.5).
      return (resource) => operand.read(resource).some((value) => value !== '' && !(Array.isArray(value) && value.length === 0));
    }
    case 'compare': {
      const operand = resolve(filter.path);
      const test = comparison(operand.definition, filter.op, filter.value);
      // `eq null`: the attribute has no value (RFC 7643 §2.5: null is unassigned); `ne null`: it has one.
      if (filter.value === null) return (resource) => (operand.read(resource).length === 0) === (filter.op === 'eq');
      return (resource) => (filter.op === 'ne' ? !operand.read(resource).some((value) => test(value, 'eq')) : operand.read(resource).some((value) => test(value, filter.op)));
    }
    case 'valuePath':
      if (!type) throw ScimError.badRequest(SCIM_TYPE.invalidFilter, 'Value filters do not nest');
      return valuePath(filter, type);
    default:
      return unreachable(filter);
  }
}

/** `emails[type eq "work"]`: true when one value of the multi-valued attribute passes the inner filter. */
function valuePath(filter: Extract<Filter, { kind: 'valuePath' }>, type: ResourceTypeDefinition): Predicate {
  const outer = resolvePath(type, filter.path, SCIM_TYPE.invalidFilter);
  const subAttributes = outer.definition.subAttributes;
  if (!subAttributes || outer.sub) throw ScimError.badRequest(SCIM_TYPE.invalidFilter, `${filter.path.attr} has no sub-attributes to filter on`);
  const inner = compile(filter.filter, (path) => {
    const sub = path.schema === undefined && path.sub === undefined ? findAttribute(subAttributes, path.attr) : undefined;
    if (!sub) throw ScimError.badRequest(SCIM_TYPE.invalidFilter, `${JSON.stringify(path.attr)} is not a sub-attribute of ${filter.path.attr}`);
    return { read: (element) => [element[sub.name]].filter((value) => value !== undefined && value !== null), definition: sub };
  });
  return (resource) => elementsAt(resource, outer).some((element) => inner(element));
}

/** A complex attribute compared as a whole compares its `value` sub-attribute (RFC 7644 §3.4.2.2, "emails co …"). */
function comparedDefinition(definition: AttributeDefinition): AttributeDefinition {
  if (definition.type !== 'complex') return definition;
  return findAttribute(definition.subAttributes, 'value') ?? definition;
}

type Test = (value: unknown, op: CompareOperator) => boolean;

function comparison(definition: AttributeDefinition, op: CompareOperator, expected: CompValue): Test {
  const refuse = (why: string): never => {
    throw ScimError.badRequest(SCIM_TYPE.invalidFilter, `${definition.name} ${why}`);
  };
  if (expected === null) {
    // `eq null` is "has no value"; nothing else compares with null.
    if (op !== 'eq' && op !== 'ne') refuse('cannot be compared with null except by eq and ne');
    return () => false;
  }
  switch (definition.type) {
    case 'boolean':
      if (op !== 'eq' && op !== 'ne') refuse(`is a boolean: only eq and ne apply, not ${op}`);
      if (typeof expected !== 'boolean') refuse('is a boolean: compare it with true or false');
      return (value) => value === expected;
    case 'integer':
    case 'decimal':
      if (typeof expected !== 'number' || ['co', 'sw', 'ew'].includes(op)) refuse(`is a number: compare it with a number by eq, ne, gt, ge, lt or le`);
      return (value, operator) => typeof value === 'number' && ordered(value, expected as number, operator);
    case 'dateTime': {
      const instant = typeof expected === 'string' ? Date.parse(expected) : Number.NaN;
      if (Number.isNaN(instant) || ['co', 'sw', 'ew'].includes(op)) refuse('is a dateTime: compare it with an xsd:dateTime string by eq, ne, gt, ge, lt or le');
      return (value, operator) => typeof value === 'string' && ordered(Date.parse(value), instant, operator);
    }
    case 'complex':
    case 'binary':
      return refuse('cannot be compared');
    default: {
      if (typeof expected !== 'string') refuse('is a string: compare it with a "string"');
      // RFC 7643 §2.2: caseExact false compares without regard to case.
      const fold = (s: string): string => (definition.caseExact ? s : s.toLowerCase());
      const target = fold(expected as string);
      return (value, operator) => typeof value === 'string' && compareStrings(fold(value), target, operator);
    }
  }
}

function compareStrings(value: string, target: string, op: CompareOperator): boolean {
  if (op === 'co') return value.includes(target);
  if (op === 'sw') return value.startsWith(target);
  if (op === 'ew') return value.endsWith(target);
  return ordered(value < target ? -1 : value > target ? 1 : 0, 0, op);
}

function ordered(value: number, target: number, op: CompareOperator): boolean {
  switch (op) {
    case 'eq':
    case 'ne':
      return value === target;
    case 'gt':
      return value > target;
    case 'ge':
      return value >= target;
    case 'lt':
      return value < target;
    case 'le':
      return value <= target;
    default:
      return false;
  }
}

function unreachable(value: never): never {
  throw new Error(`Unhandled filter ${JSON.stringify(value)}`);
}

/**
 * The predicate of a PATCH path's value filter (`members[value eq "…"]`, RFC 7644 §3.5.2), over one
 * value of the multi-valued attribute `subAttributes` describes.
 */
export function compileValueFilter(filter: Filter, attributeName: string, subAttributes: readonly AttributeDefinition[]): Predicate {
  return compile(filter, (path) => {
    const sub = path.schema === undefined && path.sub === undefined ? findAttribute(subAttributes, path.attr) : undefined;
    if (!sub) throw ScimError.badRequest(SCIM_TYPE.invalidPath, `${JSON.stringify(path.attr)} is not a sub-attribute of ${attributeName}`);
    return { read: (element) => [element[sub.name]].filter((value) => value !== undefined && value !== null), definition: sub };
  });
}
