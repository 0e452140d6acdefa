import { Inject, Injectable } from '@nestjs/common';
import { AttributeKind, type Attribute, type Collection } from '../../collections/collection.js';
import { apiConfig, type ApiConfig } from '../../config/api.config.js';
import type { ListQuery } from '../../items/item.store.js';
import { ApiError } from '../../http/api-error.js';
import { decodeCursor } from './cursor.js';
import { normalizeDateTime } from './date-time.js';
import { isStorableText } from '../../common/storable-text.js';

/** Query parameters with a meaning of their own; every other one is a filter. */
const RESERVED = new Set(['limit', 'sort', 'cursor']);
/** Sort keys every collection has: creation order (ids are UUIDv7). */
const CREATION_ORDER = new Set(['id', 'createdAt']);

export interface ParsedListQuery extends ListQuery {
  /** The sort parameter as given ('' for the default), which cursors are bound to. */
  sortKey: string;
}

/**
 * Turns GET /<collection>?… into a database query. Nothing is silently ignored: an unknown
 * parameter, a value of the wrong type, a repeated parameter or a limit out of range is a 400.
 */
@Injectable()
export class ListQueryParser {
  constructor(@Inject(apiConfig.KEY) private readonly config: ApiConfig) {}

  parse(collection: Collection, query: Record<string, unknown>): ParsedListQuery {
    const single = (name: string): string | undefined => {
      const value = query[name];
      if (value === undefined) return undefined;
      if (typeof value !== 'string') throw new ApiError(400, `The parameter "${name}" must appear once`);
      return value;
    };

    const filters: ListQuery['filters'] = [];
    for (const name of Object.keys(query)) {
      if (RESERVED.has(name)) continue;
      const attribute = collection.attributes.get(name);
      if (!attribute?.filterable) {
        const allowed = [...collection.attributes.values()].filter((a) => a.filterable).map((a) => a.name);
        throw new ApiError(400, `Unknown filter "${name}". ${collection.name} can be filtered by: ${allowed.join(', ') || 'nothing'}; other parameters: limit, sort, cursor`);
      }
      filters.push({ attribute, value: typedValue(attribute, single(name)!) });
    }

    const limit = this.parseLimit(single('limit'));
    const sortKey = single('sort') ?? '';
    const descending = sortKey.startsWith('-');
    const sortName = descending ? sortKey.slice(1) : sortKey;
    let sortBy: Attribute | undefined;
    if (sortName !== '' && !CREATION_ORDER.has(sortName)) {
      sortBy = collection.attributes.get(sortName);
      if (!sortBy?.sortable) {
        const allowed = ['id', 'createdAt', ...[...collection.attributes.values()].filter((a) => a.sortable).map((a) => a.name)];
        throw new ApiError(400, `Cannot sort by "${sortName}". ${collection.name} can be sorted by: ${allowed.join(', ')} (prefix - for descending)`);
      }
    } else if (sortKey === '-') {
      throw new ApiError(400, 'The sort parameter names no attribute');
    }
    const cursor = single('cursor');
    const after = cursor === undefined ? undefined : decodeCursor(cursor, sortKey);
    return { filters, sortBy, descending, limit, sortKey, after: after && { value: after.value, id: after.id } };
  }

  private parseLimit(value: string | undefined): number {
    if (value === undefined) return this.config.defaultLimit;
    const limit = /^[0-9]{1,6}$/.test(value) ? Number(value) : NaN;
    if (!(limit >= 1 && limit <= this.config.maxLimit)) throw new ApiError(400, `limit must be an integer from 1 to ${this.config.maxLimit}`);
    return limit;
  }
}

/** A filter value typed by the attribute's schema: "true" for a boolean, "3" for an integer. */
function typedValue(attribute: Attribute, raw: string): unknown {
  switch (attribute.kind) {
    case AttributeKind.Boolean:
      if (raw === 'true' || raw === 'false') return raw === 'true';
      throw new ApiError(400, `The filter "${attribute.name}" takes true or false`);
    case AttributeKind.Integer:
      if (/^-?[0-9]{1,15}$/.test(raw)) return Number(raw);
      throw new ApiError(400, `The filter "${attribute.name}" takes an integer`);
    case AttributeKind.Number: {
      const value = /^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$/.test(raw) ? Number(raw) : NaN;
      if (Number.isFinite(value)) return value;
      throw new ApiError(400, `The filter "${attribute.name}" takes a number`);
    }
    case AttributeKind.DateTime: {
      const value = normalizeDateTime(raw);
      if (value !== undefined) return value;
      throw new ApiError(400, `The filter "${attribute.name}" takes an RFC 3339 date-time`);
    }
    default:
      if (raw.length > 1000) throw new ApiError(400, `The filter "${attribute.name}" is too long`);
      if (!isStorableText(raw)) throw new ApiError(400, `The filter "${attribute.name}" contains characters that cannot be stored`);
      return raw;
  }
}
