import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { ItemsModule } from '../items/items.module.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { BearerAuthGuard } from './auth/bearer-auth.guard.js';
import { BearerStrategy } from './auth/bearer.strategy.js';
import { CollectionAccessGuard } from './auth/collection-access.guard.js';
import { MacTokenVerifier } from './auth/mac-token.verifier.js';
import { CollectionController } from './collection.controller.js';
import { ItemController } from './item.controller.js';
import { ItemsService } from './items/items.service.js';
import { ListQueryParser } from './items/list-query.parser.js';
import { ResourceLinks } from './items/resource-links.js';
import { ResourceRoutes } from './resource-routes.js';
import { CommonModule } from '../common/common.module.js';
import { CollectionsModule } from '../collections/collections.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';

/** The resource server: the versioned REST API over the declared collections, behind bearer and MAC tokens. */
@Module({
  imports: [CommonModule, CollectionsModule, RateLimitModule, PassportModule, TokensModule, ItemsModule],
  controllers: [CollectionController, ItemController],
  providers: [BearerStrategy, BearerAuthGuard, MacTokenVerifier, CollectionAccessGuard, ItemsService, ListQueryParser, ResourceLinks, ResourceRoutes],
  exports: [ResourceRoutes],
})
export class ResourcesModule {}
