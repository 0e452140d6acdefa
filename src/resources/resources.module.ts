import { Module, type OnModuleInit } from '@nestjs/common';
import { AccessModule } from '../access/access.module.js';
import { ItemsModule } from '../items/items.module.js';
import { CollectionScope } from './collection-scope.js';
import { CollectionController } from './collection.controller.js';
import { ItemController } from './item.controller.js';
import { ItemsService } from './items/items.service.js';
import { ListQueryParser } from './items/list-query.parser.js';
import { ResourceLinks } from './items/resource-links.js';
import { ResourceRoutes } from './resource-routes.js';
import { CommonModule } from '../common/common.module.js';
import { CollectionsModule } from '../collections/collections.module.js';
import { CollectionRegistry } from '../collections/collection-registry.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { IdempotencyModule } from '../idempotency/idempotency.module.js';

/** The resource server: the versioned REST API over the declared collections, behind bearer and MAC tokens. */
@Module({
  imports: [CommonModule, CollectionsModule, RateLimitModule, AccessModule, ItemsModule, IdempotencyModule],
  controllers: [CollectionController, ItemController],
  providers: [CollectionScope, ItemsService, ListQueryParser, ResourceLinks, ResourceRoutes],
  exports: [ResourceRoutes],
})
export class ResourcesModule implements OnModuleInit {
  constructor(private readonly collections: CollectionRegistry) {}

  /** The item schemas compiled as the server starts, not on the first write to each collection. */
  onModuleInit(): void {
    this.collections.compileAll();
  }
}
