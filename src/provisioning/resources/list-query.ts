import type { Filter } from '../filter/filter.ast.js';
import { compileFilter, type Predicate } from '../filter/filter.compiler.js';
import { parseAttrPath, parseFilter } from '../filter/filter.parser.js';
import { readPath, type Resource } from '../filter/resource-path.js';
import { ScimError } from '../http/scim-error.js';
import { resolvePath, type ResourceTypeDefinition } from '../schema/resource-types.js';
import { SCHEMA, SCIM_TYPE } from '../scim.constants.js';
import { Projection } from './projection.js';

/** RFC 7644 §3.4.2: a query's filter, sort, page and projection, checked. */
export interface ListQuery {
  filter?: Filter;
  predicate: Predicate;
  sort?: { compare: (a: Resource, b: Resource) => number; attribute: string };
  /** 1-based (§3.4.2.4); less than 1 is read as 1. */
  startIndex: number;
  count: number;
  projection: Projection;
  /** Whether the filter or the sort reads the membership attribute (a User's `groups`, a Group's `members`), which a listing then has to load for every candidate. */
  readsMembership: boolean;
}

/** Reads the query parameters (names case-insensitive, as connectors vary: Okta sends startIndex, some StartIndex). */
export function parseListQuery(query: Record<string, unknown>, type: ResourceTypeDefinition, maxResults: number): ListQuery {
  const parameter = (name: string): string | undefined => {
    const entry = Object.entries(query).find(([key]) => key.toLowerCase() === name.toLowerCase());
    const value = entry?.[1];
    if (Array.isArray(value)) throw ScimError.badRequest(SCIM_TYPE.invalidValue, `${name} is given once`);
    return typeof value === 'string' ? value : undefined;
  };
  const filterText = parameter('filter');
  const filter = filterText === undefined || filterText.trim() === '' ? undefined : parseFilter(filterText);
  const predicate = filter ? compileFilter(filter, type) : () => true;
  const sortBy = parameter('sortBy');
  const sortOrder = parameter('sortOrder')?.toLowerCase();
  if (sortOrder !== undefined && sortOrder !== 'ascending' && sortOrder !== 'descending') throw ScimError.badRequest(SCIM_TYPE.invalidValue, 'sortOrder is "ascending" or "descending"');
  const sort = sortBy === undefined ? undefined : sorter(sortBy, sortOrder === 'descending', type);
  const projection = new Projection(type, parameter('attributes'), parameter('excludedAttributes'));
  const membership = new RegExp(`\\b${type.name === 'User' ? 'groups' : 'members'}\\b`, 'i');
  const mentionsMembership = (text: string | undefined): boolean => text !== undefined && membership.test(text);
  return {
    filter,
    predicate,
    sort,
    startIndex: Math.max(1, integer(parameter('startIndex'), 'startIndex') ?? 1),
    // §3.4.2.4: a negative count is 0; more than the server's maximum is the maximum.
    count: Math.min(maxResults, Math.max(0, integer(parameter('count'), 'count') ?? maxResults)),
    projection,
    readsMembership: mentionsMembership(filterText) || mentionsMembership(sortBy),
  };
}

/** §3.4.2.3: sorted by the attribute's (first) value; resources without one go last, whatever the order. */
function sorter(sortBy: string, descending: boolean, type: ResourceTypeDefinition): ListQuery['sort'] {
  const resolved = resolvePath(type, parseAttrPath(sortBy, SCIM_TYPE.invalidValue), SCIM_TYPE.invalidValue);
  const key = (resource: Resource): string | number | undefined => {
    const [first] = readPath(resource, resolved);
    if (typeof first === 'string') return (resolved.sub ?? resolved.definition).caseExact ? first : first.toLowerCase();
    if (typeof first === 'number') return first;
    return typeof first === 'boolean' ? Number(first) : undefined;
  };
  return {
    attribute: sortBy,
    compare: (a, b) => {
      const [x, y] = [key(a), key(b)];
      if (x === undefined || y === undefined) return x === y ? 0 : x === undefined ? 1 : -1;
      const order = x < y ? -1 : x > y ? 1 : 0;
      return descending ? -order : order;
    },
  };
}

function integer(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^-?\d{1,9}$/.test(value.trim())) throw ScimError.badRequest(SCIM_TYPE.invalidValue, `${name} is an integer`);
  return Number(value.trim());
}

/** §3.4.2: the ListResponse of one page. */
export function listResponse(total: number, startIndex: number, resources: Resource[]): Resource {
  return { schemas: [SCHEMA.listResponse], totalResults: total, startIndex, itemsPerPage: resources.length, Resources: resources };
}

/** One page of already filtered, sorted resources. */
export function page<T>(items: readonly T[], query: ListQuery): T[] {
  return items.slice(query.startIndex - 1, query.startIndex - 1 + query.count);
}
