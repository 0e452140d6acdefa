import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Item } from './item.entity.js';
import { ItemIndexesService } from './item-indexes.service.js';
import { ItemStore } from './item.store.js';
import { CommonModule } from '../common/common.module.js';
import { CollectionsModule } from '../collections/collections.module.js';

/** Storage of the REST API's items: one table for every collection, with per-attribute indexes. */
@Module({
  imports: [CommonModule, CollectionsModule, TypeOrmModule.forFeature([Item])],
  providers: [ItemStore, ItemIndexesService],
  exports: [ItemStore],
})
export class ItemsModule {}
