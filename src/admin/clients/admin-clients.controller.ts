import { Controller, Delete, Get, HttpCode, Param, Patch, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Client } from '../../clients/client.entity.js';
import { ClientsService } from '../../clients/clients.service.js';
import { DomainError } from '../../common/domain-error.js';
import { jsonObjectBody } from '../../http/content-negotiation.js';
import { AdminRoute } from '../admin-access.js';
import { parseAdminPage, sendAdminPage } from '../admin-paging.js';
import { ADMIN_API, sendAdminJson } from '../admin-reply.js';
import { adminClientEditor } from './admin-client-editor.js';
import { newClientFrom, patchedClient } from './client-body.js';
import { parseClientFilter } from './client-list-query.js';

const JSON_TYPES = ['application/json'];
/** RFC 7396's media type, and plain JSON, which is what most clients send. */
const PATCH_TYPES = ['application/merge-patch+json', 'application/json'];

/**
 * OAuth clients over the admin API (issue 48): what clients:create, clients:list,
 * clients:rotate-secret and clients:delete do, through the same ClientsService, so the rules, the
 * owner-only scopes among them, and the audit events are the CLI's. The registration never shows
 * its secret or hash; a secret is answered once, when it is issued.
 */
@Controller(ADMIN_API)
export class AdminClientsController {
  constructor(private readonly clients: ClientsService) {}

  @Get('clients')
  @AdminRoute('clients', 'read')
  async list(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const query = request.query as Record<string, unknown>;
    const page = parseAdminPage(query);
    const rows = await this.clients.search(parseClientFilter(query), page);
    sendAdminPage(request, reply, rows, page, (client) => this.clients.toView(client), (client) => ({ value: client.name, id: client.id }));
  }

  @Get('clients/:id')
  @AdminRoute('clients', 'read')
  async read(@Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    sendAdminJson(reply, this.clients.toView(await this.client(id)));
  }

  @Post('clients')
  @AdminRoute('clients', 'write')
  async create(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const { client, secret } = await this.clients.create(newClientFrom(jsonObjectBody(request, JSON_TYPES)), adminClientEditor(request));
    void reply.header('Location', `/${ADMIN_API}/clients/${encodeURIComponent(client.id)}`);
    sendAdminJson(reply, this.clients.toView(client, secret), 201);
  }

  @Patch('clients/:id')
  @AdminRoute('clients', 'write')
  async update(@Req() request: FastifyRequest, @Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    const client = await this.client(id);
    const updated = await this.clients.update(client, patchedClient(client, jsonObjectBody(request, PATCH_TYPES)), adminClientEditor(request));
    sendAdminJson(reply, this.clients.toView(updated));
  }

  /** A new secret, shown this once; the old one is refused from now on (clients:rotate-secret). */
  @Post('clients/:id/secret')
  @AdminRoute('clients', 'write')
  async rotateSecret(@Req() request: FastifyRequest, @Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    const { client, secret } = await this.clients.rotateSecret(id, adminClientEditor(request));
    sendAdminJson(reply, this.clients.toView(client, secret));
  }

  /** The client with its codes, tokens and consents (clients:delete). */
  @Delete('clients/:id')
  @AdminRoute('clients', 'write')
  @HttpCode(204)
  async remove(@Req() request: FastifyRequest, @Param('id') id: string): Promise<void> {
    await this.clients.delete(id, adminClientEditor(request));
  }

  private async client(id: string): Promise<Client> {
    const client = await this.clients.findById(id);
    if (!client) throw new DomainError('client_not_found', `No client with id ${JSON.stringify(id.slice(0, 64))}`);
    return client;
  }
}
