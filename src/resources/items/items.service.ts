import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Collection } from '../../collections/collection.js';
import type { Item } from '../../items/item.entity.js';
import { ItemStore, type WriteOutcome } from '../../items/item.store.js';
import { ApiError } from '../../http/api-error.js';
import type { CommitsWith } from '../../database/transactions.js';
import { assertIfMatch, hasIfMatch } from '../http/conditional-requests.js';
import { encodeCursor, UUID_PATTERN } from './cursor.js';
import { ItemAttributes } from './item-attributes.js';
import type { ParsedListQuery } from './list-query.parser.js';

/** How often a write without If-Match re-reads and retries when another writer got in between. */
const WRITE_ATTEMPTS = 3;

export interface Page {
  items: Item[];
  /** Cursor of the next page, when there is one. */
  next?: string;
}

/** The REST operations on one owner's items. Another owner's item is indistinguishable from a missing one. */
@Injectable()
export class ItemsService {
  constructor(private readonly items: ItemStore) {}

  async list(collection: Collection, ownerId: string, query: ParsedListQuery): Promise<Page> {
    // One extra row tells whether a next page exists, without a COUNT.
    const rows = await this.items.list(collection.name, ownerId, { ...query, limit: query.limit + 1 });
    if (rows.length <= query.limit) return { items: rows };
    const items = rows.slice(0, query.limit);
    const last = items[items.length - 1];
    const value = query.sortBy ? (last.data[query.sortBy.name] ?? null) : null;
    return { items, next: encodeCursor({ sort: query.sortKey, value, id: last.id }) };
  }

  async get(collection: Collection, ownerId: string, id: string): Promise<Item> {
    const item = UUID_PATTERN.test(id) ? await this.items.find(collection.name, ownerId, id) : null;
    if (!item) throw new ApiError(404, `No ${collection.name} item with id ${id}`);
    return item;
  }

  create(collection: Collection, ownerId: string, body: Record<string, unknown>, commitsWith?: CommitsWith<Item>): Promise<Item> {
    return this.items.create(collection.name, ownerId, ItemAttributes.forCreate(collection, body), commitsWith);
  }

  replace(collection: Collection, ownerId: string, id: string, body: Record<string, unknown>, request: FastifyRequest): Promise<Item> {
    return this.write(collection, ownerId, id, request, (current) => ItemAttributes.forReplace(collection, body, current));
  }

  patch(collection: Collection, ownerId: string, id: string, patch: Record<string, unknown>, request: FastifyRequest, commitsWith?: CommitsWith<Item>): Promise<Item> {
    return this.write(collection, ownerId, id, request, (current) => ItemAttributes.forMergePatch(collection, patch, current), commitsWith);
  }

  async delete(collection: Collection, ownerId: string, id: string, request: FastifyRequest): Promise<void> {
    const current = await this.get(collection, ownerId, id);
    assertIfMatch(request, current);
    const outcome = await this.items.delete(collection.name, ownerId, id, hasIfMatch(request) ? current.version : undefined);
    if (outcome === 'not_found') throw new ApiError(404, `No ${collection.name} item with id ${id}`);
    if (outcome === 'stale') throw new ApiError(412, 'The item changed while it was being deleted');
  }

  /**
   * Read, compute, then write only if the version is still the one read (a conditional UPDATE).
   * With If-Match a lost race is 412; without it the write is retried on the newer version.
   */
  private async write(collection: Collection, ownerId: string, id: string, request: FastifyRequest, compute: (current: Item) => Record<string, unknown>, commitsWith?: CommitsWith<Item>): Promise<Item> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.get(collection, ownerId, id);
      assertIfMatch(request, current);
      const outcome: WriteOutcome = await this.items.replace(collection.name, ownerId, id, compute(current), current.version, commitsWith);
      if (outcome.outcome === 'ok') return outcome.item;
      if (outcome.outcome === 'not_found') throw new ApiError(404, `No ${collection.name} item with id ${id}`);
      if (hasIfMatch(request)) throw new ApiError(412, 'The item changed while it was being written');
      if (attempt >= WRITE_ATTEMPTS) throw new ApiError(409, 'The item is being changed by others; try again');
    }
  }
}
