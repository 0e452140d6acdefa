import { Body, Controller, Get, Param, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendOutcome, type InteractionOutcome } from '../auth/interaction/interaction-responder.js';
import { CookieForm } from '../http/cookie-forms.js';
import { clientEditForm, clientEditFormOf, clientPatchOf, grantChoicesFor, type ClientEditForm } from './client-edit-form.js';
import { CLIENT_FIELD_RULES } from './client-form.js';
import { ConsoleEnabled } from './console-enabled.guard.js';
import { ConsoleExceptionFilter } from './console-exception.filter.js';
import { formCall, formErrors, NO_ERRORS, problemOfRefusal, titleWith, type FormErrors } from './console-forms.js';
import { ConsolePages } from './console-pages.js';
import { CONSOLE, segment } from './console-paths.js';
import { ConsoleSessions } from './console-sessions.js';
import type { ConsoleVisit } from './console-visit.js';

const CLIENTS = `${CONSOLE}/clients`;

/**
 * Editing a client's registration (issue 48): name, grant types, redirect URIs and scope, sent to
 * PATCH /clients/{id}, which checks the result as a whole registration and audits each change
 * (client.updated). Its refusal is shown beside the field it is about, the values kept; a client
 * holding an admin scope (the console's own among them) is an owner's to change, as the API says.
 */
@Controller()
@UseFilters(ConsoleExceptionFilter)
@UseGuards(ConsoleEnabled)
export class ConsoleClientEditController {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly pages: ConsolePages,
  ) {}

  @Get(`${CLIENTS.slice(1)}/:id/edit`)
  async form(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    const client = await visit.api.get(`/clients/${segment(id)}`);
    sendOutcome(reply, await this.editPage(visit, client, clientEditFormOf(client)));
  }

  @CookieForm()
  @Post(`${CLIENTS.slice(1)}/:id/edit`)
  async save(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Body() body: Record<string, unknown> | undefined): Promise<void> {
    const page = `${CLIENTS}/${segment(id)}`;
    const visit = await this.sessions.submit(request, reply, body, `${page}/edit`);
    const client = await visit.api.get(`/clients/${segment(id)}`);
    const form = clientEditForm(body);
    const change = clientPatchOf(clientEditFormOf(client), form);
    if ('problems' in change) return void sendOutcome(reply, await this.editPage(visit, client, form, formErrors(change.problems), 400));
    const changed = Object.keys(change.patch).length > 0;
    if (changed) {
      const result = await formCall(() => visit.api.send('PATCH', `/clients/${segment(id)}`, change.patch));
      if ('refused' in result) return void sendOutcome(reply, await this.editPage(visit, client, form, formErrors([problemOfRefusal(result.refused, CLIENT_FIELD_RULES)]), result.refused.status));
    }
    await visit.leave({ notice: changed ? `The registration of ${String(change.patch.client_name ?? client.client_name)} is saved.` : 'Nothing was changed.' });
    sendOutcome(reply, { kind: 'redirect', status: 303, location: page });
  }

  private editPage(visit: ConsoleVisit, client: Record<string, unknown>, values: ClientEditForm, errors: FormErrors = NO_ERRORS, status = 200): Promise<InteractionOutcome> {
    const data = { client, values, errors, grantTypes: grantChoicesFor(client) };
    return this.pages.page(visit, 'client-edit', titleWith(errors, `Edit ${String(client.client_name)}`), data, { section: CLIENTS, status });
  }
}
