import { Controller, Get, Param, Put, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ClientGroupSettings } from '../../groups/client-group-settings.js';
import { SignInMethods } from '../../identity-providers/sign-in-methods.js';
import { AdminRoute } from '../admin-access.js';
import { ADMIN_API, sendAdminJson } from '../admin-reply.js';
import { adminClientEditor } from './admin-client-editor.js';
import { groupSettingsFrom, signInRuleFrom } from './client-settings-body.js';

/**
 * Who may sign in to a client, over the admin API (issue 48): what clients:groups (issue 46) and
 * clients:sign-in (issue 45) set, through the same services (ClientGroupSettings, SignInMethods),
 * audited as the CLI's are (`client.updated`). Requiring a group or a way of signing in narrows who
 * gets in and lifting it widens it: a change of the client, so on a client holding an owner-only
 * scope an owner's alone (client-change-policy.ts, 403 admin_client_protected).
 */
@Controller(ADMIN_API)
export class AdminClientSettingsController {
  constructor(
    private readonly groups: ClientGroupSettings,
    private readonly signIn: SignInMethods,
  ) {}

  @Get('clients/:id/groups')
  @AdminRoute('clients', 'read')
  async groupSettings(@Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    sendAdminJson(reply, await this.groups.show(id));
  }

  @Put('clients/:id/groups')
  @AdminRoute('clients', 'write')
  async setGroupSettings(@Req() request: FastifyRequest, @Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    sendAdminJson(reply, await this.groups.set(id, groupSettingsFrom(request), adminClientEditor(request)));
  }

  @Get('clients/:id/sign-in')
  @AdminRoute('clients', 'read')
  async signInRule(@Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    sendAdminJson(reply, await this.signIn.ruleOf(id));
  }

  @Put('clients/:id/sign-in')
  @AdminRoute('clients', 'write')
  async setSignInRule(@Req() request: FastifyRequest, @Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    sendAdminJson(reply, await this.signIn.setRule(id, signInRuleFrom(request), adminClientEditor(request)));
  }
}
