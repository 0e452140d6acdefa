import { Injectable } from '@nestjs/common';
import { CollectionRegistry } from '../collections/collection-registry.js';
import { COLLECTION_METHODS } from './collection.controller.js';
import { ITEM_METHODS } from './item.controller.js';
import { API_VERSION } from './items/resource-links.js';

const API_PATH = new RegExp(`^/api/v${API_VERSION}/([^/]+)(?:/([^/]+))?/?$`);

/**
 * The methods an API path answers to, for 405 responses (RFC 9110 §15.5.6): Fastify only knows
 * its parametric routes as patterns, so the global filter asks here for /api/v1/<collection>[/<id>].
 */
@Injectable()
export class ResourceRoutes {
  constructor(private readonly collections: CollectionRegistry) {}

  allowedMethods(path: string): string | undefined {
    const match = API_PATH.exec(path);
    if (!match || !this.collections.get(decodeURIComponent(match[1]))) return undefined;
    return match[2] === undefined ? COLLECTION_METHODS : ITEM_METHODS;
  }
}
