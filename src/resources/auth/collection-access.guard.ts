import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { CollectionRegistry } from '../../collections/collection-registry.js';
import type { Collection } from '../../collections/collection.js';
import { ApiError } from '../api-error.js';
import { TokenType } from '../../common/oauth.constants.js';
import { bearerError } from './bearer-auth.guard.js';
import { macError } from './mac-token.verifier.js';
import type { TokenPrincipal } from './token-principal.js';

/** Methods that only read: `<collection>:read`. Every other method needs `<collection>:write`. */
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface ResourceRequest extends FastifyRequest {
  user: TokenPrincipal;
  collection: Collection;
}

/**
 * Resolves the collection of the path (unknown → 404) and checks the token's scope for the
 * method (RFC 6750 §3.1: 403 insufficient_scope naming the scope needed). Runs after the bearer guard.
 */
@Injectable()
export class CollectionAccessGuard implements CanActivate {
  constructor(private readonly collections: CollectionRegistry) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<ResourceRequest>();
    const name = (request.params as Record<string, string>).collection;
    const collection = this.collections.get(name);
    if (!collection) throw new ApiError(404, `There is no collection named "${name}"`);
    const needed = READ_METHODS.has(request.method) ? collection.readScope : collection.writeScope;
    if (!request.user.scopes.has(needed)) {
      const challenge = request.user.scheme === TokenType.Mac ? macError : bearerError;
      throw challenge(403, 'insufficient_scope', `This request needs the scope ${needed}`, { scope: needed });
    }
    request.collection = collection;
    return true;
  }
}
