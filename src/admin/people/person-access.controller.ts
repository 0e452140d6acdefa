import { Controller, Delete, Get, HttpCode, Param, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminRoute } from '../admin-access.js';
import { parseAdminPage, sendAdminPage } from '../admin-paging.js';
import { ADMIN_API, sendAdminJson } from '../admin-reply.js';
import { AccountAdministration } from './account-administration.service.js';
import { requestAdministrator } from './people-administrator.js';
import { PeopleDirectory } from './people-directory.service.js';
import { sessionPosition } from './people-requests.js';
import { PersonAccess } from './person-access.service.js';

/**
 * Where a person is signed in and which applications hold access (issue 48): a stolen laptop's
 * sessions ended (each through the sessions' end listeners, so back-channel logout clients are
 * told, as at sign-out and users:sign-out), an application's access withdrawn.
 */
@Controller(`${ADMIN_API}/people/:id`)
export class PersonAccessController {
  constructor(
    private readonly people: PeopleDirectory,
    private readonly administration: AccountAdministration,
    private readonly access: PersonAccess,
  ) {}

  @Get('sessions')
  @AdminRoute('people', 'read')
  async sessions(@Req() request: FastifyRequest, @Param('id') id: string, @Query() query: Record<string, unknown>, @Res() reply: FastifyReply): Promise<void> {
    const page = parseAdminPage(query);
    const rows = await this.access.sessionsOf(await this.people.require(id), page.limit + 1, sessionPosition(page.after));
    sendAdminPage(request, reply, rows, page, (row) => row, (row) => ({ value: row.created_at, id: row.id! }));
  }

  @Delete('sessions')
  @AdminRoute('people', 'write')
  async endSessions(@Req() request: FastifyRequest, @Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    sendAdminJson(reply, { sessions_ended: await this.administration.endSessions(requestAdministrator(request), await this.people.require(id)) });
  }

  @Delete('sessions/:sessionId')
  @AdminRoute('people', 'write')
  @HttpCode(204)
  async endSession(@Req() request: FastifyRequest, @Param('id') id: string, @Param('sessionId') sessionId: string): Promise<void> {
    await this.administration.endSession(requestAdministrator(request), await this.people.require(id), sessionId);
  }

  @Get('grants')
  @AdminRoute('people', 'read')
  async grants(@Req() request: FastifyRequest, @Param('id') id: string, @Query() query: Record<string, unknown>, @Res() reply: FastifyReply): Promise<void> {
    const page = parseAdminPage(query);
    const rows = await this.access.grantsOf(await this.people.require(id), page.limit + 1, page.after?.id ?? null);
    sendAdminPage(request, reply, rows, page, (row) => row, (row) => ({ value: row.client_id, id: row.client_id }));
  }

  @Delete('grants/:clientId')
  @AdminRoute('people', 'write')
  @HttpCode(204)
  async withdraw(@Req() request: FastifyRequest, @Param('id') id: string, @Param('clientId') clientId: string): Promise<void> {
    await this.access.withdraw(requestAdministrator(request), await this.people.require(id), clientId);
  }
}
