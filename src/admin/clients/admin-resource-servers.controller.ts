import { Controller, Delete, Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { validate as isUuid } from 'uuid';
import { DomainError } from '../../common/domain-error.js';
import { jsonObjectBody } from '../../http/content-negotiation.js';
import { ResourceServersService } from '../../resource-servers/resource-servers.service.js';
import { adminCaller, AdminRoute } from '../admin-access.js';
import { parseAdminPage, sendAdminPage } from '../admin-paging.js';
import { ADMIN_API, sendAdminJson } from '../admin-reply.js';
import { newResourceServerFrom } from './resource-server-body.js';

/**
 * The resource servers tokens can be restricted to (RFC 8707): what resources:register,
 * resources:list and resources:delete do, through the same ResourceServersService and audit
 * events. Named by id here (a URI may be longer than a path segment should carry).
 */
@Controller(ADMIN_API)
export class AdminResourceServersController {
  constructor(private readonly servers: ResourceServersService) {}

  @Get('resource-servers')
  @AdminRoute('clients', 'read')
  async list(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const page = parseAdminPage(request.query as Record<string, unknown>, (cursor) => isUuid(cursor.id));
    sendAdminPage(request, reply, await this.servers.page(page), page, (server) => this.servers.view(server), (server) => ({ value: server.name, id: server.id }));
  }

  @Post('resource-servers')
  @AdminRoute('clients', 'write')
  async register(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const server = await this.servers.register(newResourceServerFrom(jsonObjectBody(request, ['application/json'])), adminCaller(request).actor, request.ip);
    void reply.header('Location', `/${ADMIN_API}/resource-servers/${server.id}`);
    sendAdminJson(reply, this.servers.view(server), 201);
  }

  @Delete('resource-servers/:id')
  @AdminRoute('clients', 'write')
  @HttpCode(204)
  async remove(@Req() request: FastifyRequest, @Param('id') id: string): Promise<void> {
    if (!isUuid(id)) throw new DomainError('resource_server_not_found', `No resource server with the id ${JSON.stringify(id.slice(0, 64))}.`);
    await this.servers.remove({ id }, adminCaller(request).actor, request.ip);
  }
}
