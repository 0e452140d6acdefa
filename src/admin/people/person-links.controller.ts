import { Controller, Delete, Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminRoute } from '../admin-access.js';
import { ADMIN_API, sendAdminJson } from '../admin-reply.js';
import { requestAdministrator } from './people-administrator.js';
import { PeopleDirectory } from './people-directory.service.js';
import { parseUpstreamLink } from './people-requests.js';
import { PersonEmailVerification } from './person-email-verification.service.js';
import { PersonUpstreamLinks } from './person-upstream-links.service.js';

/**
 * The links that sign a person in or prove their address (issue 48): their links to upstream
 * identity providers (users:link, users:unlink) and a link confirming their address
 * (users:verify-email), through the services the CLI calls. AdministratorProtection keeps all of
 * it an owner's for administrators: a linked upstream identity signs in as the person.
 */
@Controller(`${ADMIN_API}/people/:id`)
export class PersonLinksController {
  constructor(
    private readonly people: PeopleDirectory,
    private readonly upstreamLinks: PersonUpstreamLinks,
    private readonly verification: PersonEmailVerification,
  ) {}

  /** Every link, not paged: the service returns them all (a person has one per provider, seldom more). */
  @Get('upstream-links')
  @AdminRoute('people', 'read')
  async list(@Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    sendAdminJson(reply, { items: await this.upstreamLinks.linksOf(await this.people.require(id)) });
  }

  /** 201 and the link when it is made; 200 when it was the person's already (nothing changed, nothing audited). */
  @Post('upstream-links')
  @AdminRoute('people', 'write')
  async link(@Req() request: FastifyRequest, @Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    const { idpId, subject } = parseUpstreamLink(request);
    const target = await this.people.require(id);
    const made = await this.upstreamLinks.link(requestAdministrator(request), target, idpId, subject);
    const link = (await this.upstreamLinks.linksOf(target)).find((each) => each.idp === idpId && each.subject === subject);
    if (made) void reply.header('Location', `/${ADMIN_API}/people/${target.id}/upstream-links/${encodeURIComponent(idpId)}/${encodeURIComponent(subject)}`);
    sendAdminJson(reply, link, made ? 201 : 200);
  }

  @Delete('upstream-links/:idp/:subject')
  @AdminRoute('people', 'write')
  @HttpCode(204)
  async unlink(@Req() request: FastifyRequest, @Param('id') id: string, @Param('idp') idpId: string, @Param('subject') subject: string): Promise<void> {
    await this.upstreamLinks.unlink(requestAdministrator(request), await this.people.require(id), idpId, subject);
  }

  /** 202: the message is sent; the link in it is never returned (no --print-link over HTTP). */
  @Post('email-verification')
  @AdminRoute('people', 'write')
  async verifyEmail(@Req() request: FastifyRequest, @Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    const sent = await this.verification.send(requestAdministrator(request), await this.people.require(id));
    sendAdminJson(reply, { email: sent.email, expires_at: sent.expiresAt }, 202);
  }
}
