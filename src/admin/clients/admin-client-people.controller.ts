import { Controller, Delete, Get, HttpCode, Param, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { validate as isUuid } from 'uuid';
import { assertOwnerMayManage } from '../../clients/client-change-policy.js';
import type { Client } from '../../clients/client.entity.js';
import { ClientsService } from '../../clients/clients.service.js';
import { DomainError } from '../../common/domain-error.js';
import { AccessWithdrawalService } from '../../consents/access-withdrawal.service.js';
import { ApiError } from '../../http/api-error.js';
import { publicSessionId } from '../../sessions/session-id.js';
import { SessionsService } from '../../sessions/sessions.service.js';
import { AdminRoute } from '../admin-access.js';
import { parseAdminPage, sendAdminPage } from '../admin-paging.js';
import { ADMIN_API } from '../admin-reply.js';
import { adminClientEditor } from './admin-client-editor.js';

/** A time as the sessions' keyset carries it (toISOString): anything else would reach the database as a date it may refuse. */
const ISO_TIME = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$/;

/**
 * The people a client holds access for (their consents) and the live sessions it signed people
 * in through (session_clients, recorded for back-channel logout). Withdrawing a grant is what the
 * person does on /account/access (AccessWithdrawalService: the consent, codes and tokens go in one
 * transaction), audited with the administrator as the actor.
 */
@Controller(ADMIN_API)
export class AdminClientPeopleController {
  constructor(
    private readonly clients: ClientsService,
    private readonly access: AccessWithdrawalService,
    private readonly sessions: SessionsService,
  ) {}

  @Get('clients/:id/grants')
  @AdminRoute('clients', 'read')
  async grants(@Req() request: FastifyRequest, @Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    const page = parseAdminPage(request.query as Record<string, unknown>, (cursor) => isUuid(cursor.id));
    const rows = await this.access.grantsOf((await this.client(id)).id, page);
    sendAdminPage(
      request,
      reply,
      rows,
      page,
      (grant) => ({ person: { id: grant.user.id, username: grant.user.username, name: grant.user.name }, scope: grant.scope, granted_at: grant.createdAt.toISOString(), updated_at: grant.updatedAt.toISOString() }),
      (grant) => ({ value: grant.user.username, id: grant.user.id }),
    );
  }

  /** Issue 48: on a client holding an owner-only scope (the console), an owner's act, as every change of it is. */
  @Delete('clients/:id/grants/:personId')
  @AdminRoute('clients', 'write')
  @HttpCode(204)
  async withdraw(@Req() request: FastifyRequest, @Param('id') id: string, @Param('personId') personId: string): Promise<void> {
    const client = await this.client(id);
    const editor = adminClientEditor(request);
    assertOwnerMayManage(client.scope, editor);
    if (!isUuid(personId) || !(await this.access.consentOf(personId, client.id))) throw new ApiError(404, `No grant of this client by the person ${JSON.stringify(personId.slice(0, 64))}`);
    await this.access.withdraw(personId, client.id, { actor: editor.actor, ip: editor.ip });
  }

  /** The sessions live now in which the client signed the person in, newest first, with their count. */
  @Get('clients/:id/sessions')
  @AdminRoute('clients', 'read')
  async liveSessions(@Req() request: FastifyRequest, @Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    const page = parseAdminPage(request.query as Record<string, unknown>, (cursor) => ISO_TIME.test(cursor.value) && !Number.isNaN(Date.parse(cursor.value)));
    const client = await this.client(id);
    const [rows, count] = await Promise.all([this.sessions.liveWithClient(client.id, page), this.sessions.countLiveWithClient(client.id)]);
    sendAdminPage(
      request,
      reply,
      rows,
      page,
      ({ session, createdAt }) => ({
        // The public sid, as ID and logout tokens carry it (the cursor holds the row id, the SHA-256 of the cookie's secret, which opens nothing).
        sid: publicSessionId(session.id),
        person: { id: session.user.id, username: session.user.username },
        signed_in_at: session.createdAt.toISOString(),
        expires_at: session.expiresAt.toISOString(),
        client_since: createdAt.toISOString(),
      }),
      ({ session }) => ({ value: session.createdAt.toISOString(), id: session.id }),
      { count },
    );
  }

  private async client(id: string): Promise<Client> {
    const client = await this.clients.findById(id);
    if (!client) throw new DomainError('client_not_found', `No client with id ${JSON.stringify(id.slice(0, 64))}`);
    return client;
  }
}
