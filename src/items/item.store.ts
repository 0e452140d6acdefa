import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import type { DataSource, EntityManager, Repository } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import { uuidv7 } from '../common/random.js';
import type { Attribute } from '../collections/collection.js';
import { Clock } from '../common/clock.js';
import { databaseConfig, type DatabaseConfig } from '../config/database.config.js';
import { EntityRows } from '../database/entity-rows.js';
import { LookupBatch } from '../database/lookup-batch.js';
import { Transactions, type CommitsWith } from '../database/transactions.js';
import { AttributeSql } from './item-attributes.sql.js';
import { Item } from './item.entity.js';

export interface ListQuery {
  /** Equality filters, ANDed. */
  filters: { attribute: Attribute; value: unknown }[];
  /** Sort attribute (undefined: by id, i.e. creation order), with id as the tiebreaker. */
  sortBy?: Attribute;
  descending: boolean;
  limit: number;
  /** Keyset position: the sort value and id of the last item of the previous page. */
  after?: { value: unknown; id: string };
}

export type WriteOutcome = { outcome: 'ok'; item: Item } | { outcome: 'not_found' } | { outcome: 'stale' };

/**
 * Items of every collection, always scoped to one owner: no method reads or writes across owners.
 * Writes are single conditional statements, so that many instances behind a load balancer never
 * overwrite each other silently (If-Match is checked by the database, not in memory), and go
 * through Transactions. Listing builds its SQL with the query builder and item-attributes.sql.ts (the
 * JSON expressions of each dialect); the read by id is a prepared statement (on every GET).
 */
@Injectable()
export class ItemStore {
  readonly sql: AttributeSql;
  private readonly rows: EntityRows<Item>;
  /** One item by id (the primary key), grouped per turn of the event loop on PostgreSQL; owner and collection are checked on the row. */
  private readonly byId: LookupBatch;

  constructor(
    @InjectRepository(Item) private readonly items: Repository<Item>,
    @Inject(databaseConfig.KEY) database: DatabaseConfig,
    private readonly clock: Clock,
    private readonly transactions: Transactions,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {
    this.sql = new AttributeSql(database.dialect);
    this.rows = new EntityRows(dataSource.getMetadata(Item));
    this.byId = new LookupBatch(dataSource, 'latchkey_item_by_id', `SELECT ${this.rows.selectList} FROM ${this.rows.table}`, 'id', 'id');
  }

  /**
   * One page, filtered, sorted and limited by the database. Keyset paging: each query starts at the
   * cursor with an index range seek, so a deep page costs what the first does.
   */
  async list(collection: string, ownerId: string, query: ListQuery): Promise<Item[]> {
    const direction = query.descending ? 'DESC' : 'ASC';
    const after = query.descending ? '<' : '>';
    if (!query.sortBy) {
      const builder = this.baseQuery(collection, ownerId, query).orderBy('"id"', direction);
      if (query.after) builder.andWhere(`"id" ${after} :afterId`, { afterId: query.after.id });
      return builder.limit(query.limit).getMany();
    }
    // Items without the sort attribute come after the others in ascending order and before them in
    // descending order, on both databases. Each of the two segments is one index range; the page
    // continues into the second segment when the first runs out.
    const expression = this.sql.value(query.sortBy.name);
    const segments: ('values' | 'missing')[] = query.descending ? ['missing', 'values'] : ['values', 'missing'];
    const cursorSegment = query.after === undefined ? undefined : query.after.value === null ? 'missing' : 'values';
    const page: Item[] = [];
    for (const segment of segments.slice(cursorSegment ? segments.indexOf(cursorSegment) : 0)) {
      const builder = this.baseQuery(collection, ownerId, query);
      const fromCursor = segment === cursorSegment ? query.after : undefined;
      if (segment === 'missing') {
        builder.andWhere(`${expression} IS NULL`).orderBy('"id"', direction);
        if (fromCursor) builder.andWhere(`"id" ${after} :afterId`, { afterId: fromCursor.id });
      } else {
        builder.andWhere(`${expression} IS NOT NULL`).orderBy(expression, direction).addOrderBy('"id"', direction);
        if (fromCursor) {
          builder.andWhere(this.sql.after(expression, after, 'afterValue', 'afterId'), {
            afterValue: this.sql.parameter(query.sortBy.kind, fromCursor.value),
            afterId: fromCursor.id,
          });
        }
      }
      page.push(...(await builder.limit(query.limit - page.length).getMany()));
      if (page.length >= query.limit) break;
    }
    return page;
  }

  /**
   * The read of GET /api/v1/<collection>/<id>, on every such request: by the primary key, in one
   * statement with the other reads of this turn (LookupBatch). Another owner's item, or one of
   * another collection, is not found, exactly as when the WHERE clause named them.
   */
  async find(collection: string, ownerId: string, id: string): Promise<Item | null> {
    const row = await this.byId.one(id);
    return row && row.ownerId === ownerId && row.collection === collection ? this.rows.decode(row) : null;
  }

  /** Inserts an item; `commitsWith` (an Idempotency-Key's answer) commits in the same transaction, or undoes the insert by throwing. */
  async create(collection: string, ownerId: string, data: Record<string, unknown>, commitsWith?: CommitsWith<Item>): Promise<Item> {
    const now = this.clock.now();
    const item = this.items.create({ id: uuidv7(), collection, ownerId, data, version: 1, createdAt: now, updatedAt: now });
    const insert = (manager: EntityManager) => manager.insert(Item, item as QueryDeepPartialEntity<Item>);
    if (!commitsWith) await this.transactions.write(insert);
    else {
      await this.transactions.run(async (manager) => {
        await insert(manager);
        await commitsWith(manager, item);
      });
    }
    return item;
  }

  /**
   * Replaces an item's attributes; with `expectedVersion`, only if nobody changed it since.
   * `commitsWith` runs in the same transaction once the item is written, as for create.
   */
  replace(collection: string, ownerId: string, id: string, data: Record<string, unknown>, expectedVersion?: number, commitsWith?: CommitsWith<Item>): Promise<WriteOutcome> {
    return this.transactions.run(async (manager): Promise<WriteOutcome> => {
      const criteria = { id, ownerId, collection, ...(expectedVersion === undefined ? {} : { version: expectedVersion }) };
      const result = await manager.update(Item, criteria, { data: data as QueryDeepPartialEntity<Item['data']>, version: () => '"version" + 1', updatedAt: this.clock.now() });
      const item = await manager.findOneBy(Item, { id, ownerId, collection });
      if (!item) return { outcome: 'not_found' };
      if (result.affected !== 1) return { outcome: 'stale' };
      await commitsWith?.(manager, item);
      return { outcome: 'ok', item };
    });
  }

  /** Deletes an item; with `expectedVersion`, only if nobody changed it since. */
  async delete(collection: string, ownerId: string, id: string, expectedVersion?: number): Promise<'ok' | 'not_found' | 'stale'> {
    const criteria = { id, ownerId, collection, ...(expectedVersion === undefined ? {} : { version: expectedVersion }) };
    const result = await this.transactions.write((manager) => manager.delete(Item, criteria));
    if (result.affected === 1) return 'ok';
    return (await this.find(collection, ownerId, id)) ? 'stale' : 'not_found';
  }

  /** Runs the attribute indexes' DDL (ItemIndexesService decides which), each IF NOT EXISTS. */
  async createIndexes(statements: string[]): Promise<void> {
    for (const statement of statements) {
      try {
        await this.dataSource.query(statement);
      } catch (error) {
        // Two instances creating the same index at the same instant: PostgreSQL may report the
        // loser's duplicate catalog row although IF NOT EXISTS was given. The index exists.
        if (!/already exists|duplicate key/i.test(error instanceof Error ? error.message : String(error))) throw error;
      }
    }
  }

  /** The owner's items of one collection matching the filters. */
  private baseQuery(collection: string, ownerId: string, query: ListQuery) {
    const builder = this.items.createQueryBuilder('item').where('"owner_id" = :ownerId', { ownerId });
    // A literal (the name is validated at load), so that SQLite can use the per-collection partial indexes.
    builder.andWhere(`"collection" = '${collection}'`);
    query.filters.forEach(({ attribute, value }, index) => {
      const condition = this.sql.matches(attribute, `f${index}`, value);
      builder.andWhere(condition.sql, condition.parameters);
    });
    return builder;
  }
}
