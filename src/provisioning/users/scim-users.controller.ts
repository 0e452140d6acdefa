import { Controller, Delete, Get, Param, Patch, Post, Put, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ScimProtected } from '../http/scim-protected.decorator.js';
import { ifMatchOf, scimBody, sendScim } from '../http/scim-reply.js';
import { actorOf, type ScimRequest } from '../http/scim-request.js';
import { Projection } from '../resources/projection.js';
import { USER_RESOURCE } from '../schema/resource-types.js';
import { ScimUserListing } from './scim-user-listing.js';
import { ScimUsersService } from './scim-users.service.js';

/** RFC 7644 §3.2: /scim/v2/Users. */
@Controller('scim/v2/Users')
@ScimProtected()
export class ScimUsersController {
  constructor(
    private readonly users: ScimUsersService,
    private readonly listing: ScimUserListing,
  ) {}

  @Get()
  async list(@Query() query: Record<string, unknown>, @Res() reply: FastifyReply): Promise<void> {
    sendScim(reply, await this.listing.list(query));
  }

  @Post()
  async create(@Req() request: ScimRequest, @Query() query: Record<string, unknown>, @Res() reply: FastifyReply): Promise<void> {
    sendScim(reply, projected(query, await this.users.create(scimBody(request), actorOf(request))), 201);
  }

  @Get(':id')
  async get(@Param('id') id: string, @Query() query: Record<string, unknown>, @Res() reply: FastifyReply): Promise<void> {
    sendScim(reply, projected(query, await this.users.get(id)));
  }

  @Put(':id')
  async replace(@Param('id') id: string, @Req() request: ScimRequest, @Query() query: Record<string, unknown>, @Res() reply: FastifyReply): Promise<void> {
    sendScim(reply, projected(query, await this.users.replace(id, scimBody(request), ifMatchOf(request), actorOf(request))));
  }

  @Patch(':id')
  async patch(@Param('id') id: string, @Req() request: ScimRequest, @Query() query: Record<string, unknown>, @Res() reply: FastifyReply): Promise<void> {
    sendScim(reply, projected(query, await this.users.patch(id, scimBody(request), ifMatchOf(request), actorOf(request))));
  }

  @Delete(':id')
  async delete(@Param('id') id: string, @Req() request: ScimRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.users.delete(id, ifMatchOf(request), actorOf(request));
    void reply.code(204).send();
  }
}

/** RFC 7644 §3.9: `attributes` and `excludedAttributes` on any response that returns the resource. */
function projected(query: Record<string, unknown>, resource: Record<string, unknown>): Record<string, unknown> {
  return new Projection(USER_RESOURCE, stringParameter(query.attributes), stringParameter(query.excludedAttributes)).apply(resource);
}

function stringParameter(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
