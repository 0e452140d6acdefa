import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { CollectionRegistry } from '../collections/collection-registry.js';
import { ItemsRepository } from './items.repository.js';

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
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly collections: CollectionRegistry,
    private readonly items: ItemsRepository,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const statement of this.statements()) {
      try {
        await this.dataSource.query(statement);
      } catch (error) {
        // Two instances creating the same index at the same instant: PostgreSQL may report the
        // loser's duplicate catalog row although IF NOT EXISTS was given. The index exists.
        if (!/already exists|duplicate key/i.test(error instanceof Error ? error.message : String(error))) throw error;
      }
    }
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
