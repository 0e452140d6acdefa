import { parseAttrPath } from '../filter/filter.parser.js';
import { isObject, type Resource } from '../filter/resource-path.js';
import { resolvePath, type ResolvedPath, type ResourceTypeDefinition } from '../schema/resource-types.js';
import { SCIM_TYPE } from '../scim.constants.js';

/** Returned whatever `attributes` says (RFC 7643 §3.1, §7 returned "always"). */
const ALWAYS = new Set(['id', 'schemas']);

/**
 * RFC 7644 §3.4.2.5 `attributes` and `excludedAttributes`: which attributes of a resource are
 * returned. Paths are resolved against the schemas (an unknown one is 400 invalidValue).
 */
export class Projection {
  private readonly only?: ResolvedPath[];
  private readonly excluded: ResolvedPath[];

  constructor(type: ResourceTypeDefinition, attributes?: string, excludedAttributes?: string) {
    const paths = (list: string | undefined): ResolvedPath[] | undefined =>
      list === undefined || list.trim() === '' ? undefined : list.split(',').map((item) => resolvePath(type, parseAttrPath(item.trim(), SCIM_TYPE.invalidValue), SCIM_TYPE.invalidValue));
    this.only = paths(attributes);
    this.excluded = this.only ? [] : (paths(excludedAttributes) ?? []);
  }

  /** Whether a resource's `name` attribute (in the core schema) will be returned: lets a listing skip loading it. */
  includes(name: string): boolean {
    if (this.only) return this.only.some((path) => path.extension === undefined && path.definition.name === name);
    return !this.excluded.some((path) => path.extension === undefined && path.sub === undefined && path.definition.name === name);
  }

  apply(resource: Resource): Resource {
    if (this.only) {
      const result: Resource = {};
      for (const [key, value] of Object.entries(resource)) if (ALWAYS.has(key)) result[key] = value;
      for (const path of this.only) copy(resource, result, path);
      return result;
    }
    const result = structuredClone(resource);
    for (const path of this.excluded) remove(result, path);
    return result;
  }
}

function copy(from: Resource, to: Resource, { extension, definition, sub }: ResolvedPath): void {
  const source = extension === undefined || definition.name === extension ? from : from[extension];
  if (!isObject(source) || source[definition.name] === undefined) return;
  const target = extension === undefined || definition.name === extension ? to : ((to[extension] ??= {}) as Resource);
  const value = source[definition.name];
  if (sub === undefined) target[definition.name] = value;
  else if (Array.isArray(value)) target[definition.name] = value.filter(isObject).map((element) => ({ [sub.name]: element[sub.name] }));
  else if (isObject(value) && value[sub.name] !== undefined) target[definition.name] = { ...asObject(target[definition.name]), [sub.name]: value[sub.name] };
}

function remove(resource: Resource, { extension, definition, sub }: ResolvedPath): void {
  if (ALWAYS.has(definition.name) && extension === undefined) return;
  const container = extension === undefined || definition.name === extension ? resource : resource[extension];
  if (!isObject(container)) return;
  if (sub === undefined) delete container[definition.name];
  else {
    const value = container[definition.name];
    for (const element of Array.isArray(value) ? value : [value]) if (isObject(element)) delete element[sub.name];
  }
}

function asObject(value: unknown): Resource {
  return isObject(value) ? value : {};
}
