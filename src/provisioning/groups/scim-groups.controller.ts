import { Controller, Delete, Get, Param, Patch, Post, Put, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ScimProtected } from '../http/scim-protected.decorator.js';
import { ifMatchOf, scimBody, sendScim } from '../http/scim-reply.js';
import { actorOf, type ScimRequest } from '../http/scim-request.js';
import { Projection } from '../resources/projection.js';
import { GROUP_RESOURCE } from '../schema/resource-types.js';
import { ScimGroupListing } from './scim-group-listing.js';
import { ScimGroupsService } from './scim-groups.service.js';

/** RFC 7644 §3.2: /scim/v2/Groups. */
@Controller('scim/v2/Groups')
@ScimProtected()
export class ScimGroupsController {
  constructor(
    private readonly groups: ScimGroupsService,
    private readonly listing: ScimGroupListing,
  ) {}

  @Get()
  async list(@Query() query: Record<string, unknown>, @Res() reply: FastifyReply): Promise<void> {
    sendScim(reply, await this.listing.list(query));
  }

  @Post()
  async create(@Req() request: ScimRequest, @Query() query: Record<string, unknown>, @Res() reply: FastifyReply): Promise<void> {
    sendScim(reply, projected(query, await this.groups.create(scimBody(request), actorOf(request))), 201);
  }

  @Get(':id')
  async get(@Param('id') id: string, @Query() query: Record<string, unknown>, @Res() reply: FastifyReply): Promise<void> {
    sendScim(reply, projected(query, await this.groups.get(id)));
  }

  @Put(':id')
  async replace(@Param('id') id: string, @Req() request: ScimRequest, @Query() query: Record<string, unknown>, @Res() reply: FastifyReply): Promise<void> {
    sendScim(reply, projected(query, await this.groups.replace(id, scimBody(request), ifMatchOf(request), actorOf(request))));
  }

  @Patch(':id')
  async patch(@Param('id') id: string, @Req() request: ScimRequest, @Query() query: Record<string, unknown>, @Res() reply: FastifyReply): Promise<void> {
    sendScim(reply, projected(query, await this.groups.patch(id, scimBody(request), ifMatchOf(request), actorOf(request))));
  }

  @Delete(':id')
  async delete(@Param('id') id: string, @Req() request: ScimRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.groups.delete(id, ifMatchOf(request), actorOf(request));
    void reply.code(204).send();
  }
}

function projected(query: Record<string, unknown>, resource: Record<string, unknown>): Record<string, unknown> {
  return new Projection(GROUP_RESOURCE, typeof query.attributes === 'string' ? query.attributes : undefined, typeof query.excludedAttributes === 'string' ? query.excludedAttributes : undefined).apply(resource);
}
