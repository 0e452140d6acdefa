import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { CollectionRegistry } from '../collections/collection-registry.js';
import type { Collection } from '../collections/collection.js';
import type { ScopeResolver } from '../access/access-requirement.js';
import type { UserTokenPrincipal } from '../access/token-principal.js';
import { ApiError } from '../http/api-error.js';

/** Methods that only read: `<collection>:read`. Every other method needs `<collection>:write`. */
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A data API request once its token and collection are known. */
export interface ResourceRequest extends FastifyRequest {
  user: UserTokenPrincipal;
  collection: Collection;
}

/**
 * The scope a data API request needs: the collection of its path (unknown → 404, once the token
 * is known to be good) and the method. The collection is kept on the request for the controller.
 */
@Injectable()
export class CollectionScope implements ScopeResolver {
  constructor(private readonly collections: CollectionRegistry) {}

  scopeFor(request: FastifyRequest): string {
    const name = (request.params as Record<string, string>).collection;
    const collection = this.collections.get(name);
    if (!collection) throw new ApiError(404, `There is no collection named "${name}"`);
    (request as ResourceRequest).collection = collection;
    return READ_METHODS.has(request.method) ? collection.readScope : collection.writeScope;
  }
}
