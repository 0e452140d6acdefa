import { Controller, Delete, Get, HttpCode, Param, Patch, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../common/domain-error.js';
import { isUuid } from '../../groups/group-input.js';
import { groupView } from '../../groups/group-view.js';
import type { Group } from '../../groups/group.entity.js';
import { GroupsService, type GroupMemberRef } from '../../groups/groups.service.js';
import { adminCaller, AdminRoute } from '../admin-access.js';
import { parseAdminPage, sendAdminPage } from '../admin-paging.js';
import { ADMIN_API, sendAdminJson } from '../admin-reply.js';
import { adminBody, adminQuery, invalidCursor } from './admin-input.js';

/**
 * Groups (issue 46) over the admin API (issue 48): what `groups:*` do, through the same
 * GroupsService, so its rules (unique names, no cycles, members that exist) and audit events
 * (`group.created|updated|deleted|members_changed`) are the CLI's. Read by the auditor, changed by an
 * owner: membership opens applications (a client's required groups).
 */
@Controller(ADMIN_API)
export class AdminGroupsController {
  constructor(private readonly groups: GroupsService) {}

  @Get('groups')
  @AdminRoute('system', 'read')
  async list(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const page = parseAdminPage(adminQuery(request, ['limit', 'cursor']));
    if (page.after && !isUuid(page.after.id)) throw invalidCursor();
    const rows = await this.groups.page(page.limit + 1, page.after && { name: page.after.value, id: page.after.id });
    sendAdminPage(request, reply, rows, page, (group) => groupView(group), (group) => ({ value: group.displayName, id: group.id }));
  }

  @Get('groups/:id')
  @AdminRoute('system', 'read')
  async show(@Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    sendAdminJson(reply, await this.view(await this.require(id)));
  }

  /** `{"display_name", "external_id"?, "members"?: [{"type": "user" | "group", "id"}]}`. */
  @Post('groups')
  @AdminRoute('system', 'write')
  async create(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const body = adminBody(request, ['display_name', 'external_id', 'members']);
    const group = await this.groups.create({ displayName: body.display_name as string, externalId: body.external_id as string | null | undefined, members: body.members as GroupMemberRef[] | undefined }, adminCaller(request));
    sendAdminJson(reply, await this.view(group), 201);
  }

  /** Rename, or set or clear (`null`) the external id; what is not named stays. */
  @Patch('groups/:id')
  @AdminRoute('system', 'write')
  async update(@Req() request: FastifyRequest, @Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    const body = adminBody(request, ['display_name', 'external_id']);
    const group = await this.groups.update(id, { displayName: body.display_name as string | undefined, externalId: body.external_id as string | null | undefined }, adminCaller(request));
    sendAdminJson(reply, await this.view(group));
  }

  @Delete('groups/:id')
  @AdminRoute('system', 'write')
  @HttpCode(204)
  async delete(@Req() request: FastifyRequest, @Param('id') id: string): Promise<void> {
    await this.groups.delete(id, adminCaller(request));
  }

  /** Adds `{"members": [{"type", "id"}, …]}`; those in already stay as they are. */
  @Post('groups/:id/members')
  @AdminRoute('system', 'write')
  async addMembers(@Req() request: FastifyRequest, @Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    const { members } = adminBody(request, ['members']);
    if (!Array.isArray(members) || members.length === 0) throw new DomainError('invalid_group', 'members must name at least one { "type": "user" | "group", "id" }.');
    await this.groups.addMembers(id, members as GroupMemberRef[], adminCaller(request));
    sendAdminJson(reply, await this.view(await this.require(id)));
  }

  /** Removes one member; one that is not in is no error (the end state is what was asked). */
  @Delete('groups/:id/members/:type/:member')
  @AdminRoute('system', 'write')
  @HttpCode(204)
  async removeMember(@Req() request: FastifyRequest, @Param('id') id: string, @Param('type') type: string, @Param('member') member: string): Promise<void> {
    await this.groups.removeMembers(id, [{ type, id: member } as GroupMemberRef], adminCaller(request));
  }

  private async require(id: string): Promise<Group> {
    const group = await this.groups.findById(id);
    if (!group) throw new DomainError('group_not_found', `No group with id ${JSON.stringify(id)}.`);
    return group;
  }

  private async view(group: Group): Promise<Record<string, unknown>> {
    return groupView(group, await this.groups.namedMembers(group.id));
  }
}
