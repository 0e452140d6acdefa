import { Body, Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendOutcome } from '../auth/interaction/interaction-responder.js';
import { CookieForm } from '../http/cookie-forms.js';
import { notAllowedToChange } from './console-errors.js';
import { ConsoleEnabled } from './console-enabled.guard.js';
import { ConsoleExceptionFilter } from './console-exception.filter.js';
import { formCall, formErrors, NO_ERRORS, problemOfRefusal } from './console-forms.js';
import { PROTOCOL_NAMES, PROVIDERS, providerFormPage, providerPath } from './console-identity-provider-page.js';
import { listPage } from './console-lists.js';
import { ConsolePages } from './console-pages.js';
import { segment } from './console-paths.js';
import { ConsoleSessions } from './console-sessions.js';
import { newProviderForm, NONE_FROM_FILES, providerFormFrom, type IdentityProviderView, type UpstreamProtocol } from './identity-provider-form.js';
import { PROVIDER_FIELDS, providerRequest } from './identity-provider-request.js';

/** The protocol a request names, or undefined. */
function protocolOf(value: unknown): UpstreamProtocol | undefined {
  return value === 'oidc' || value === 'saml' ? value : undefined;
}

/**
 * Upstream identity providers (issue 48 on issue 45's federation): the list, one provider with
 * its settings (secrets only ever by the name of the environment variable that holds them: the API
 * stores no other) and the addresses to give the provider's administrator, and the form that adds
 * one, checked by the admin API, whose messages show beside the fields they are about. Read by the
 * auditor and the owner, changed by the owner (the API's 'system' area). Changes and deletion:
 * ConsoleIdentityProviderChangesController.
 */
@Controller()
@UseFilters(ConsoleExceptionFilter)
@UseGuards(ConsoleEnabled)
export class ConsoleIdentityProvidersController {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly pages: ConsolePages,
  ) {}

  @Get(PROVIDERS.slice(1))
  async list(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Query('cursor') cursor?: unknown): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    const page = await listPage<IdentityProviderView>(visit.api, '/identity-providers', PROVIDERS, {}, cursor);
    const data = { providers: page.items, next: page.next, first: page.first, canWrite: visit.can('system', 'write'), protocols: PROTOCOL_NAMES };
    sendOutcome(reply, await this.pages.page(visit, 'identity-providers', 'Identity providers', data, { section: PROVIDERS }));
  }

  /** First the protocol (a choice any administrator can make without knowing the settings), then that protocol's form. */
  @Get(`${PROVIDERS.slice(1)}/new`)
  async newForm(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Query('protocol') protocol?: unknown): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    if (!visit.can('system', 'write')) throw notAllowedToChange('identity providers', PROVIDERS);
    const chosen = protocolOf(protocol);
    if (chosen === undefined) return void sendOutcome(reply, await this.pages.page(visit, 'identity-provider-new', 'Add an identity provider', {}, { section: PROVIDERS }));
    sendOutcome(reply, await providerFormPage(this.pages, visit, newProviderForm(chosen), undefined, NONE_FROM_FILES, NO_ERRORS));
  }

  @CookieForm()
  @Post(PROVIDERS.slice(1))
  async create(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Body() body: Record<string, unknown> | undefined): Promise<void> {
    const protocol = protocolOf(body?.protocol) ?? 'oidc';
    const visit = await this.sessions.submit(request, reply, body, `${PROVIDERS}/new?protocol=${protocol}`);
    const form = providerFormFrom(body, protocol);
    const prepared = providerRequest(form, undefined, NONE_FROM_FILES);
    if ('problems' in prepared) return void sendOutcome(reply, await providerFormPage(this.pages, visit, form, undefined, NONE_FROM_FILES, formErrors(prepared.problems), 400));
    const result = await formCall(() => visit.api.send<IdentityProviderView>('POST', '/identity-providers', prepared.body));
    if ('refused' in result) {
      const errors = formErrors([problemOfRefusal(result.refused, PROVIDER_FIELDS)]);
      return void sendOutcome(reply, await providerFormPage(this.pages, visit, form, undefined, NONE_FROM_FILES, errors, result.refused.status));
    }
    await visit.leave({ notice: `${result.answer.name} is added. Give its administrator the addresses below to finish the set-up on their side.` });
    sendOutcome(reply, { kind: 'redirect', status: 303, location: providerPath(result.answer.id) });
  }

  @Get(`${PROVIDERS.slice(1)}/:id`)
  async show(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    const provider = await visit.api.get<IdentityProviderView>(`/identity-providers/${segment(id)}`);
    const data = { provider, protocolName: PROTOCOL_NAMES[provider.protocol], base: providerPath(provider.id), canWrite: visit.can('system', 'write') };
    sendOutcome(reply, await this.pages.page(visit, 'identity-provider', provider.name, data, { section: PROVIDERS }));
  }
}
