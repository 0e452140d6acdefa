import { Controller, Delete, Get, Options, Param, Patch, Put, Req, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiRateLimitGuard } from '../rate-limit/api-rate-limit.guard.js';
import { RequireScope } from '../access/require-access.decorator.js';
import { CollectionScope, type ResourceRequest } from './collection-scope.js';
import { assertAcceptsJson, jsonObjectBody } from '../http/content-negotiation.js';
import { itemEtag } from './http/conditional-requests.js';
import { sendRepresentation, type Representation } from './http/json-response.js';
import type { CommitsWith } from '../database/transactions.js';
import { IdempotentWrites } from '../idempotency/idempotent-writes.js';
import type { Item } from '../items/item.entity.js';
import { toResource } from './items/item-representation.js';
import { ItemsService } from './items/items.service.js';
import { API_VERSION } from './items/resource-links.js';
import { writableAttributes } from './items/writable-attributes.js';

export const ITEM_METHODS = 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS';
/** RFC 7396 §4 registers application/merge-patch+json; plain JSON is accepted too (issue #3). */
const PATCH_TYPES = ['application/merge-patch+json', 'application/json'];

function representationOf(item: Item): Representation {
  return { body: toResource(item), etag: itemEtag(item), lastModified: item.updatedAt };
}

/** /api/v1/<collection>/<id>: read, replace, merge-patch, delete, describe. */
@Controller({ path: ':collection/:id', version: API_VERSION })
// A token speaking for a person, with the collection's read or write scope; the rate limit counts per token, so it runs once the token is known.
@RequireScope(CollectionScope, { resourceOwner: true, then: [ApiRateLimitGuard] })
export class ItemController {
  constructor(
    private readonly items: ItemsService,
    private readonly idempotency: IdempotentWrites,
  ) {}

  @Get()
  async get(@Req() request: ResourceRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<void> {
    assertAcceptsJson(request);
    this.send(request, reply, await this.items.get(request.collection, request.user.userId, id));
  }

  @Put()
  async replace(@Req() request: ResourceRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<void> {
    assertAcceptsJson(request);
    const body = jsonObjectBody(request, ['application/json']);
    this.send(request, reply, await this.items.replace(request.collection, request.user.userId, id, body, request));
  }

  /** With an Idempotency-Key, a retry gets the first answer instead of patching again. */
  @Patch()
  async patch(@Req() request: ResourceRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<void> {
    assertAcceptsJson(request);
    const patch = jsonObjectBody(request, PATCH_TYPES);
    const write = (commitsWith?: CommitsWith<Item>) => this.items.patch(request.collection, request.user.userId, id, patch, request, commitsWith);
    sendRepresentation(request, reply, await this.idempotency.once(request, request.user, write, representationOf));
  }

  @Delete()
  async delete(@Req() request: ResourceRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<void> {
    await this.items.delete(request.collection, request.user.userId, id, request);
    void reply.code(204).send();
  }

  @Options()
  async options(@Req() request: ResourceRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<void> {
    // The item must exist (and be the caller's): OPTIONS on someone else's item is a 404 like GET.
    await this.items.get(request.collection, request.user.userId, id);
    void reply.header('Allow', ITEM_METHODS).header('Accept-Patch', PATCH_TYPES.join(', ')).header('Content-Type', 'application/json; charset=utf-8').send(JSON.stringify(writableAttributes(request.collection)));
  }

  private send(request: ResourceRequest, reply: FastifyReply, item: Item): void {
    sendRepresentation(request, reply, representationOf(item));
  }
}
