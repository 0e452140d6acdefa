import { Module } from '@nestjs/common';
import { ScopeCatalog } from './scope-catalog.js';
import { CollectionsModule } from '../collections/collections.module.js';

@Module({ imports: [CollectionsModule], providers: [ScopeCatalog], exports: [ScopeCatalog] })
export class ScopesModule {}
