import { Controller, Delete, HttpCode, Param, Post, Put, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminRoute } from '../admin-access.js';
import { ADMIN_API, sendAdminJson } from '../admin-reply.js';
import { AccountAdministration } from './account-administration.service.js';
import { requestAdministrator } from './people-administrator.js';
import { PeopleDirectory } from './people-directory.service.js';
import { parsePassword } from './people-requests.js';
import { PersonInvitations } from './person-invitations.service.js';

/**
 * How a person signs in (issue 48): their password, second factors and passkeys, whether they may
 * sign in at all (the lock: users:deactivate and users:reactivate), and an invitation to choose a
 * first password. AdministratorProtection keeps all of it an owner's for administrators.
 */
@Controller(`${ADMIN_API}/people/:id`)
export class PersonSecurityController {
  constructor(
    private readonly people: PeopleDirectory,
    private readonly administration: AccountAdministration,
    private readonly invitations: PersonInvitations,
  ) {}

  @Put('password')
  @AdminRoute('people', 'write')
  @HttpCode(204)
  async setPassword(@Req() request: FastifyRequest, @Param('id') id: string): Promise<void> {
    const password = parsePassword(request);
    await this.administration.setPassword(requestAdministrator(request), await this.people.require(id), password);
  }

  @Delete('factors')
  @AdminRoute('people', 'write')
  async resetFactors(@Req() request: FastifyRequest, @Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    const removed = await this.administration.resetFactors(requestAdministrator(request), await this.people.require(id));
    sendAdminJson(reply, { one_time_codes_removed: removed.totp, recovery_codes_removed: removed.recoveryCodes, passkeys_removed: removed.passkeys });
  }

  @Delete('passkeys/:passkeyId')
  @AdminRoute('people', 'write')
  @HttpCode(204)
  async removePasskey(@Req() request: FastifyRequest, @Param('id') id: string, @Param('passkeyId') passkeyId: string): Promise<void> {
    await this.administration.removePasskey(requestAdministrator(request), await this.people.require(id), passkeyId);
  }

  @Put('lock')
  @AdminRoute('people', 'write')
  async lock(@Req() request: FastifyRequest, @Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    const locked = await this.administration.lock(requestAdministrator(request), await this.people.require(id));
    sendAdminJson(reply, { active: false, sessions_ended: locked.sessionsEnded, tokens_revoked: locked.tokensRevoked });
  }

  @Delete('lock')
  @AdminRoute('people', 'write')
  @HttpCode(204)
  async unlock(@Req() request: FastifyRequest, @Param('id') id: string): Promise<void> {
    await this.administration.unlock(requestAdministrator(request), await this.people.require(id));
  }

  @Post('invitation')
  @AdminRoute('people', 'write')
  async invite(@Req() request: FastifyRequest, @Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    const sent = await this.invitations.invite(requestAdministrator(request), await this.people.require(id));
    sendAdminJson(reply, { email: sent.email, expires_at: sent.expiresAt }, 202);
  }
}
