import { Controller, Delete, Get, Param, Patch, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { IDP_ID } from '../../identity-providers/identity-provider-settings.js';
import { IdentityProvidersService } from '../../identity-providers/identity-providers.service.js';
import { adminCaller, AdminRoute } from '../admin-access.js';
import { parseAdminPage, sendAdminPage } from '../admin-paging.js';
import { ADMIN_API, sendAdminJson } from '../admin-reply.js';
import { adminBody, adminQuery, invalidCursor } from './admin-input.js';
import { identityProviderInput, identityProviderWire } from './identity-provider-body.js';

const FIELDS = ['id', 'name', 'protocol', 'enabled', 'settings'];

/**
 * Upstream identity providers (issue 45) over the admin API (issue 48): what `idps:*` do, through
 * the same IdentityProvidersService (its checks, its `idp.created|updated|deleted` events). Read by
 * the auditor, changed by an owner. Secrets only ever by reference, and over HTTP only to an
 * environment variable of the LATCHKEY_IDP_ family (identity-provider-body.ts).
 */
@Controller(ADMIN_API)
export class AdminIdentityProvidersController {
  constructor(private readonly providers: IdentityProvidersService) {}

  @Get('identity-providers')
  @AdminRoute('system', 'read')
  async list(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const page = parseAdminPage(adminQuery(request, ['limit', 'cursor']));
    if (page.after && !IDP_ID.test(page.after.id)) throw invalidCursor();
    const rows = await this.providers.page(page.limit + 1, page.after?.id ?? null);
    sendAdminPage(request, reply, rows, page, identityProviderWire, (provider) => ({ value: provider.id, id: provider.id }));
  }

  @Get('identity-providers/:id')
  @AdminRoute('system', 'read')
  async show(@Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    sendAdminJson(reply, identityProviderWire(await this.providers.show(id)));
  }

  @Post('identity-providers')
  @AdminRoute('system', 'write')
  async create(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const input = identityProviderInput(adminBody(request, FIELDS));
    sendAdminJson(reply, identityProviderWire(await this.providers.create(input, adminCaller(request))), 201);
  }

  /** Changes what the body names (settings merge into the stored ones); the protocol cannot change. */
  @Patch('identity-providers/:id')
  @AdminRoute('system', 'write')
  async update(@Req() request: FastifyRequest, @Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    const input = identityProviderInput(adminBody(request, FIELDS.filter((field) => field !== 'id')));
    sendAdminJson(reply, identityProviderWire(await this.providers.update(id, input, adminCaller(request))));
  }

  /** Deletes it and every person's link to it (the people stay); refused while a client allows sign-in only through it. */
  @Delete('identity-providers/:id')
  @AdminRoute('system', 'write')
  async delete(@Req() request: FastifyRequest, @Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    sendAdminJson(reply, await this.providers.delete(id, adminCaller(request)));
  }
}
