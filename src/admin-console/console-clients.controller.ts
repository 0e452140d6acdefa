import { Body, Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendOutcome, type InteractionOutcome } from '../auth/interaction/interaction-responder.js';
import { CookieForm } from '../http/cookie-forms.js';
import { CLIENT_FIELD_RULES, GRANT_CHOICES, newClientForm, registrationOf, type NewClientForm } from './client-form.js';
import { ConsoleEnabled } from './console-enabled.guard.js';
import { ConsoleExceptionFilter } from './console-exception.filter.js';
import { formCall, formErrors, NO_ERRORS, problemOfRefusal, titleWith, type FormErrors } from './console-forms.js';
import { listPage, textParam } from './console-lists.js';
import { ConsolePages } from './console-pages.js';
import { CONSOLE, segment } from './console-paths.js';
import { ConsoleSessions } from './console-sessions.js';
import type { ConsoleVisit } from './console-visit.js';

const CLIENTS = `${CONSOLE}/clients`;

/**
 * OAuth clients (issue 48): the list with search, a type filter and paging; one client with its
 * registration, live sessions and the people who gave it access; the registration form, validated
 * by the admin API (its message shown beside the field it is about), and the new client's secret
 * shown once on the page after (post/redirect/get: a reload shows it no more).
 */
@Controller()
@UseFilters(ConsoleExceptionFilter)
@UseGuards(ConsoleEnabled)
export class ConsoleClientsController {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly pages: ConsolePages,
  ) {}

  @Get(CLIENTS.slice(1))
  async list(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Query() query: Record<string, unknown>): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    const filters = { q: textParam(query.q), type: query.type === 'public' || query.type === 'confidential' ? query.type : '' };
    const page = await listPage(visit.api, '/clients', CLIENTS, filters, query.cursor);
    const data = { ...filters, clients: page.items, next: page.next, first: page.first, canWrite: visit.can('clients', 'write') };
    sendOutcome(reply, await this.pages.page(visit, 'clients', 'Clients', data, { section: CLIENTS }));
  }

  @Get(`${CLIENTS.slice(1)}/new`)
  async form(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    sendOutcome(reply, await this.newClientPage(visit, newClientForm(undefined)));
  }

  /** Registers the client through the API; its refusal (a bad redirect URI, an owner-only scope) is shown beside its field, the values kept. */
  @CookieForm()
  @Post(CLIENTS.slice(1))
  async create(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Body() body: Record<string, unknown> | undefined): Promise<void> {
    const visit = await this.sessions.submit(request, reply, body, `${CLIENTS}/new`);
    const form = newClientForm(body);
    const registration = registrationOf(form);
    if ('problems' in registration) return void sendOutcome(reply, await this.newClientPage(visit, form, formErrors(registration.problems), 400));
    const result = await formCall(() => visit.api.send('POST', '/clients', registration.body));
    if ('refused' in result) return void sendOutcome(reply, await this.newClientPage(visit, form, formErrors([problemOfRefusal(result.refused, CLIENT_FIELD_RULES)]), result.refused.status));
    const created = result.answer;
    const clientId = String(created.client_id);
    const secret = typeof created.client_secret === 'string' ? { clientId, secret: created.client_secret } : undefined;
    await visit.leave({ notice: `${String(created.client_name)} is registered.`, secret });
    sendOutcome(reply, { kind: 'redirect', status: 303, location: `${CLIENTS}/${segment(clientId)}` });
  }

  @Get(`${CLIENTS.slice(1)}/:id`)
  async show(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    const path = `/clients/${segment(id)}`;
    const [client, sessions, grants] = await Promise.all([visit.api.get(path), visit.api.get<{ count: number }>(`${path}/sessions`, { limit: '1' }), visit.api.get<{ items: unknown[] }>(`${path}/grants`)]);
    // The secret the page before left, for this client only, this once (the cookie no longer holds it).
    const shown = visit.flash.secret;
    const secret = shown !== undefined && shown.clientId === client.client_id ? shown.secret : undefined;
    const data = { client, secret, liveSessions: sessions.count, grants: grants.items, canWrite: visit.can('clients', 'write') };
    sendOutcome(reply, await this.pages.page(visit, 'client', String(client.client_name), data, { section: CLIENTS, scripts: secret !== undefined }));
  }

  private newClientPage(visit: ConsoleVisit, values: NewClientForm, errors: FormErrors = NO_ERRORS, status = 200): Promise<InteractionOutcome> {
    return this.pages.page(visit, 'client-new', titleWith(errors, 'Register a client'), { values, errors, grantTypes: GRANT_CHOICES }, { section: CLIENTS, status });
  }
}
