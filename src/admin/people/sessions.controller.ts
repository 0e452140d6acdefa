import { Controller, Delete, Get, HttpCode, Param, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminRoute } from '../admin-access.js';
import { parseAdminPage, sendAdminPage } from '../admin-paging.js';
import { ADMIN_API } from '../admin-reply.js';
import { adminQuery } from '../system/admin-input.js';
import { requestAdministrator } from './people-administrator.js';
import { sessionPosition } from './people-requests.js';
import { SessionDirectory } from './session-directory.service.js';
import { parseSessionFilter, SESSION_FILTERS } from './session-requests.js';

/**
 * Every person's live sessions in one list (issue 48: "end a stolen laptop's sessions" when the
 * help desk knows the device, the address or the application rather than the person), and one
 * ended by the public id the list gives. A session is named only by that random id: never by its
 * row id (the hash of the cookie's secret) nor by the sid of ID tokens.
 */
@Controller(`${ADMIN_API}/sessions`)
export class SessionsController {
  constructor(private readonly directory: SessionDirectory) {}

  @Get()
  @AdminRoute('people', 'read')
  async list(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    // An unknown parameter is refused: a misspelt filter would widen a list from which sessions are ended.
    const query = adminQuery(request, [...SESSION_FILTERS, 'limit', 'cursor']);
    const filter = parseSessionFilter(query);
    const page = parseAdminPage(query);
    const rows = await this.directory.list(filter, page.limit + 1, sessionPosition(page.after));
    sendAdminPage(request, reply, rows, page, (row) => row, (row) => ({ value: row.created_at, id: row.id! }));
  }

  /** As DELETE /people/{id}/sessions/{sessionId}: a help desk may end an administrator's session too (AdministratorProtection). */
  @Delete(':publicId')
  @AdminRoute('people', 'write')
  @HttpCode(204)
  async end(@Req() request: FastifyRequest, @Param('publicId') publicId: string): Promise<void> {
    await this.directory.end(requestAdministrator(request), publicId);
  }
}
