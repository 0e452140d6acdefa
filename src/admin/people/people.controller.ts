import { Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { UsersService } from '../../users/users.service.js';
import { AdminRoute } from '../admin-access.js';
import { parseAdminPage, sendAdminPage } from '../admin-paging.js';
import { ADMIN_API, sendAdminJson } from '../admin-reply.js';
import { AccountAdministration } from './account-administration.service.js';
import { requestAdministrator } from './people-administrator.js';
import { PeopleDirectory } from './people-directory.service.js';
import { parseNewPerson, parsePeopleFilter, parseProfilePatch } from './people-requests.js';
import { personListItem } from './person-views.js';

/** People (issue 48): listed and searched, read, created, changed and deleted, as users:* does on the server. */
@Controller(`${ADMIN_API}/people`)
export class PeopleController {
  constructor(
    private readonly people: PeopleDirectory,
    private readonly administration: AccountAdministration,
    private readonly users: UsersService,
  ) {}

  @Get()
  @AdminRoute('people', 'read')
  async list(@Req() request: FastifyRequest, @Query() query: Record<string, unknown>, @Res() reply: FastifyReply): Promise<void> {
    const page = parseAdminPage(query);
    const rows = await this.people.list(parsePeopleFilter(query), page.limit + 1, page.after?.value ?? null);
    sendAdminPage(request, reply, rows, page, ({ user, roles }) => personListItem(user, roles), ({ user }) => ({ value: user.username, id: user.id }));
  }

  @Post()
  @AdminRoute('people', 'write')
  async create(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const user = await this.administration.create(requestAdministrator(request), parseNewPerson(request));
    void reply.header('Location', `/${ADMIN_API}/people/${user.id}`);
    sendAdminJson(reply, this.users.toView(user), 201);
  }

  @Get(':id')
  @AdminRoute('people', 'read')
  async show(@Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    sendAdminJson(reply, await this.people.describe(id));
  }

  @Patch(':id')
  @AdminRoute('people', 'write')
  async update(@Req() request: FastifyRequest, @Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    const changes = parseProfilePatch(request);
    sendAdminJson(reply, this.users.toView(await this.administration.update(requestAdministrator(request), await this.people.require(id), changes)));
  }

  @Delete(':id')
  @AdminRoute('people', 'write')
  @HttpCode(204)
  async delete(@Req() request: FastifyRequest, @Param('id') id: string): Promise<void> {
    await this.administration.delete(requestAdministrator(request), await this.people.require(id));
  }
}
