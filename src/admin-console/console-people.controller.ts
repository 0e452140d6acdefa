import { Controller, Get, Inject, Param, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendOutcome } from '../auth/interaction/interaction-responder.js';
import { mailConfig, type MailConfig } from '../config/mail.config.js';
import { listPage, textParam } from './console-lists.js';
import { ConsoleEnabled } from './console-enabled.guard.js';
import { ConsoleExceptionFilter } from './console-exception.filter.js';
import { ConsolePages } from './console-pages.js';
import { CONSOLE, segment } from './console-paths.js';
import { ConsoleSessions } from './console-sessions.js';

const PEOPLE = `${CONSOLE}/people`;

/**
 * People (issue 48): the list with search, a status filter and paging; one person with their
 * profile, roles, second factors, live sessions, applications and upstream links, and the actions
 * their role allows (ConsolePersonActionsController, ConsolePersonFormsController,
 * ConsolePersonRolesController and ConsolePersonLinksController do them).
 *
 * The verification email and the invitation are offered only when this server sends email
 * (SMTP_URL, the same setting the mail transport is built from): otherwise the API refuses them
 * (409) and the page says why instead. The console runs in the server's own process, so it reads
 * that setting from the configuration like the sign-in page does for "Forgot your password?",
 * rather than asking the admin API, which would need a field describing the server's set-up.
 */
@Controller()
@UseFilters(ConsoleExceptionFilter)
@UseGuards(ConsoleEnabled)
export class ConsolePeopleController {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly pages: ConsolePages,
    @Inject(mailConfig.KEY) private readonly mail: MailConfig,
  ) {}

  @Get(PEOPLE.slice(1))
  async list(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Query() query: Record<string, unknown>): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    const filters = { q: textParam(query.q), active: query.active === 'true' || query.active === 'false' ? query.active : '' };
    const page = await listPage(visit.api, '/people', PEOPLE, filters, query.cursor);
    sendOutcome(reply, await this.pages.page(visit, 'people', 'People', { ...filters, people: page.items, next: page.next, first: page.first, canWrite: visit.can('people', 'write') }, { section: PEOPLE }));
  }

  @Get(`${PEOPLE.slice(1)}/:id`)
  async show(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    const path = `/people/${segment(id)}`;
    const [person, sessions, grants, links] = await Promise.all([
      visit.api.get(path),
      visit.api.get<{ items: unknown[] }>(`${path}/sessions`),
      visit.api.get<{ items: unknown[] }>(`${path}/grants`),
      visit.api.get<{ items: unknown[] }>(`${path}/upstream-links`),
    ]);
    const data = {
      person,
      sessions: sessions.items,
      grants: grants.items,
      upstreamLinks: links.items,
      canWrite: visit.can('people', 'write'),
      canChangeRoles: visit.can('system', 'write'),
      sendsEmail: this.mail.smtpUrl !== null,
    };
    sendOutcome(reply, await this.pages.page(visit, 'person', String(person.username), data, { section: PEOPLE }));
  }
}
