import { Controller, Get, Options, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiRateLimitGuard } from '../rate-limit/api-rate-limit.guard.js';
import { RequireScope } from '../access/require-access.decorator.js';
import { CollectionScope, type ResourceRequest } from './collection-scope.js';
import { assertAcceptsJson, jsonObjectBody } from '../http/content-negotiation.js';
import { itemEtag, weakEtag } from './http/conditional-requests.js';
import { sendRepresentation, type Representation } from './http/json-response.js';
import { IdempotentWrites } from '../idempotency/idempotent-writes.js';
import type { Item } from '../items/item.entity.js';
import { toResource } from './items/item-representation.js';
import { ItemsService } from './items/items.service.js';
import { ListQueryParser } from './items/list-query.parser.js';
import { API_VERSION, ResourceLinks } from './items/resource-links.js';
import { writableAttributes } from './items/writable-attributes.js';

export const COLLECTION_METHODS = 'GET, HEAD, POST, OPTIONS';

/** /api/v1/<collection>: list (GET, and HEAD through Fastify), create (POST), describe (OPTIONS). */
@Controller({ path: ':collection', version: API_VERSION })
// A token speaking for a person, with the collection's read or write scope; the rate limit counts per token, so it runs once the token is known.
@RequireScope(CollectionScope, { resourceOwner: true, then: [ApiRateLimitGuard] })
export class CollectionController {
  constructor(
    private readonly items: ItemsService,
    private readonly queries: ListQueryParser,
    private readonly links: ResourceLinks,
    private readonly idempotency: IdempotentWrites,
  ) {}

  @Get()
  async list(@Req() request: ResourceRequest, @Res() reply: FastifyReply, @Query() query: Record<string, unknown>): Promise<void> {
    assertAcceptsJson(request);
    const { collection, user } = request;
    const page = await this.items.list(collection, user.userId, this.queries.parse(collection, query));
    const body = page.items.map(toResource);
    const lastModified = page.items.reduce<Date | undefined>((latest, item) => (!latest || item.updatedAt > latest ? item.updatedAt : latest), undefined);
    const headers: Record<string, string> = page.next ? { Link: `<${this.links.nextPage(collection.name, query, page.next)}>; rel="next"` } : {};
    sendRepresentation(request, reply, { body, etag: weakEtag(JSON.stringify(body)), lastModified, headers });
  }

  /** With an Idempotency-Key, a retry gets the first answer (the same item, its Location) instead of a second item. */
  @Post()
  async create(@Req() request: ResourceRequest, @Res() reply: FastifyReply): Promise<void> {
    assertAcceptsJson(request);
    const { collection, user } = request;
    const body = jsonObjectBody(request, ['application/json']);
    const created = (item: Item): Representation => ({
      body: toResource(item),
      etag: itemEtag(item),
      lastModified: item.updatedAt,
      status: 201,
      headers: { Location: this.links.item(collection.name, item.id) },
    });
    sendRepresentation(request, reply, await this.idempotency.once(request, user, (commitsWith) => this.items.create(collection, user.userId, body, commitsWith), created));
  }

  @Options()
  options(@Req() request: ResourceRequest, @Res() reply: FastifyReply): void {
    void reply.header('Allow', COLLECTION_METHODS).header('Content-Type', 'application/json; charset=utf-8').send(JSON.stringify(writableAttributes(request.collection)));
  }
}
