import { Body, Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendOutcome, type InteractionOutcome } from '../auth/interaction/interaction-responder.js';
import { CookieForm } from '../http/cookie-forms.js';
import { ConsoleRefusal, notAllowedToChange } from './console-errors.js';
import { ConsoleEnabled } from './console-enabled.guard.js';
import { ConsoleExceptionFilter } from './console-exception.filter.js';
import { formCall, formErrors, formText, NO_ERRORS, problemOfRefusal, titleWith, type FieldRule, type FormErrors } from './console-forms.js';
import { listPage } from './console-lists.js';
import { resourceServerWithId, type ResourceServerView } from './console-lookups.js';
import { ConsolePages } from './console-pages.js';
import { CONSOLE, segment } from './console-paths.js';
import { ConsoleSessions } from './console-sessions.js';
import type { ConsoleVisit } from './console-visit.js';

const SERVERS = `${CONSOLE}/resource-servers`;

/** The registration form as typed. */
interface ResourceServerForm {
  uri: string;
  name: string;
  access_token_format: 'opaque' | 'jwt';
  introspector: string;
}

/** Where the API's refusals are shown (ResourceServersService's messages name what they refuse). */
const SERVER_FIELDS: readonly FieldRule[] = [
  { field: 'introspector', matches: /introspect/ },
  { field: 'access_token_format', matches: /access token format/ },
  { field: 'name', matches: /^The name/ },
  { field: 'uri', matches: /URI|fragment|own APIs/ },
];

/**
 * Resource servers (RFC 8707) in the console (issue 48): the list, the registration form (checked
 * by the admin API, whose message shows beside the field it is about), and deletion after a
 * confirmation page. The client administrator's and the owner's (the API's 'clients' area).
 */
@Controller()
@UseFilters(ConsoleExceptionFilter)
@UseGuards(ConsoleEnabled)
export class ConsoleResourceServersController {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly pages: ConsolePages,
  ) {}

  @Get(SERVERS.slice(1))
  async list(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Query('cursor') cursor?: unknown): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    const page = await listPage<ResourceServerView>(visit.api, '/resource-servers', SERVERS, {}, cursor);
    const data = { servers: page.items, next: page.next, first: page.first, canWrite: visit.can('clients', 'write'), canReadClients: visit.can('clients', 'read') };
    sendOutcome(reply, await this.pages.page(visit, 'resource-servers', 'Resource servers', data, { section: SERVERS }));
  }

  @Get(`${SERVERS.slice(1)}/new`)
  async newForm(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    if (!visit.can('clients', 'write')) throw notAllowedToChange('resource servers', SERVERS);
    sendOutcome(reply, await this.formPage(visit, { uri: '', name: '', access_token_format: 'opaque', introspector: '' }, NO_ERRORS));
  }

  @CookieForm()
  @Post(SERVERS.slice(1))
  async register(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Body() body: Record<string, unknown> | undefined): Promise<void> {
    const visit = await this.sessions.submit(request, reply, body, `${SERVERS}/new`);
    const form: ResourceServerForm = {
      uri: formText(body?.uri).trim(),
      name: formText(body?.name, 300).trim(),
      access_token_format: body?.access_token_format === 'jwt' ? 'jwt' : 'opaque',
      introspector: formText(body?.introspector, 300).trim(),
    };
    if (form.uri === '') return void sendOutcome(reply, await this.formPage(visit, form, formErrors([{ field: 'uri', message: 'Give the address of the API, such as https://api.example.com/.' }]), 400));
    const registration = { uri: form.uri, name: form.name || undefined, access_token_format: form.access_token_format, introspector: form.introspector || undefined };
    const result = await formCall(() => visit.api.send<ResourceServerView>('POST', '/resource-servers', registration));
    if ('refused' in result) return void sendOutcome(reply, await this.formPage(visit, form, formErrors([problemOfRefusal(result.refused, SERVER_FIELDS)]), result.refused.status));
    await visit.leave({ notice: `${result.answer.name} is registered: clients can now ask for tokens for it.` });
    sendOutcome(reply, { kind: 'redirect', status: 303, location: SERVERS });
  }

  @Get(`${SERVERS.slice(1)}/:id/confirm/delete`)
  async confirm(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    const server = await this.require(visit, id);
    const data = {
      question: `Delete the resource server ${server.name} (${server.uri})?`,
      consequence: 'Clients can no longer ask for tokens for it. Tokens already issued for it keep working until they expire. To undo this, register it again.',
      button: 'Delete the resource server',
      danger: true,
      action: `${SERVERS}/${segment(server.id)}/delete`,
      cancel: SERVERS,
      reauthenticate: false,
    };
    sendOutcome(reply, await this.pages.page(visit, 'confirm', 'Delete the resource server', data, { section: SERVERS }));
  }

  @CookieForm()
  @Post(`${SERVERS.slice(1)}/:id/delete`)
  async delete(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Body() body: Record<string, unknown> | undefined): Promise<void> {
    const visit = await this.sessions.submit(request, reply, body, `${SERVERS}/${segment(id)}/confirm/delete`);
    const server = await this.require(visit, id);
    await visit.api.send('DELETE', `/resource-servers/${segment(server.id)}`);
    await visit.leave({ notice: `The resource server ${server.name} was deleted.` });
    sendOutcome(reply, { kind: 'redirect', status: 303, location: SERVERS });
  }

  private async require(visit: ConsoleVisit, id: string): Promise<ResourceServerView> {
    const server = await resourceServerWithId(visit.api, id);
    if (server === undefined) throw new ConsoleRefusal(404, 'Not found', 'There is no such resource server: it may have been deleted already.', { retryUrl: SERVERS });
    return server;
  }

  private formPage(visit: ConsoleVisit, values: ResourceServerForm, errors: FormErrors, status = 200): Promise<InteractionOutcome> {
    return this.pages.page(visit, 'resource-server-new', titleWith(errors, 'Register a resource server'), { values, errors }, { section: SERVERS, status });
  }
}
