import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { CollectionRegistry } from '../collections/collection-registry.js';
import { ItemStore } from './item.store.js';

/**
 * Creates, at start-up, one expression index per filterable or sortable attribute of each declared
 * collection, so that filters and sorts never scan a collection. The indexes follow the
 * collections file rather than a migration; CREATE INDEX IF NOT EXISTS makes a start-up of many
 * instances at once harmless.
 */
@Injectable()
export class ItemIndexesService implements OnApplicationBootstrap {
  private readonly logger = new Logger(ItemIndexesService.name);

  constructor(
    private readonly collections: CollectionRegistry,
    private readonly items: ItemStore,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.items.createIndexes(this.statements());
  }

  /** The DDL, in a stable order; index names are hashes so that long names fit PostgreSQL's 63 bytes. */
  statements(): string[] {
    const statements: string[] = [];
    for (const collection of this.collections.list()) {
      for (const attribute of collection.attributes.values()) {
        if (!attribute.filterable && !attribute.sortable) continue;
        const name = `IDX_items_attr_${createHash('sha256').update(`${collection.name}\0${attribute.name}\0${attribute.kind}`).digest('hex').slice(0, 20)}`;
        const sql = this.items.sql.indexDefinition(name, collection.name, attribute);
        if (sql) statements.push(sql);
      }
    }
    this.logger.debug(`${statements.length} attribute index(es) ensured`);
    return statements;
  }
}
