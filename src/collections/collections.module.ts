import { Module } from '@nestjs/common';
import { CollectionRegistry } from './collection-registry.js';

/** The collections file, loaded once; global because scopes, consent and the REST API all read it. */
@Module({ providers: [CollectionRegistry], exports: [CollectionRegistry] })
export class CollectionsModule {}
