import { Module } from '@nestjs/common';
import { ScopeCatalog } from './scope-catalog.js';

@Module({ providers: [ScopeCatalog], exports: [ScopeCatalog] })
export class ScopesModule {}
