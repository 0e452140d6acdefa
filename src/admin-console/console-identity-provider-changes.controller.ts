import { Body, Controller, Get, Param, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendOutcome } from '../auth/interaction/interaction-responder.js';
import { CookieForm } from '../http/cookie-forms.js';
import { ConsoleRefusal, notAllowedToChange } from './console-errors.js';
import { ConsoleEnabled } from './console-enabled.guard.js';
import { ConsoleExceptionFilter } from './console-exception.filter.js';
import { formCall, formErrors, NO_ERRORS, problemOfRefusal } from './console-forms.js';
import { PROVIDERS, providerFormPage, providerPath } from './console-identity-provider-page.js';
import { ConsolePages } from './console-pages.js';
import { segment } from './console-paths.js';
import { ConsoleSessions } from './console-sessions.js';
import { fromFilesOf, providerFormFrom, providerFormOf, type IdentityProviderView } from './identity-provider-form.js';
import { PROVIDER_FIELDS, providerRequest } from './identity-provider-request.js';

const people = (count: number): string => (count === 1 ? 'one person' : `${count} people`);

/**
 * Changing an identity provider and deleting it (issue 48), each a POST with the session's CSRF
 * token through the admin API, which decides whether this administrator may (an owner) and audits
 * it (idp.updated, idp.deleted). Deleting takes away a way to sign in, so, like deleting a client,
 * it needs a confirmation and a recent sign-in.
 */
@Controller()
@UseFilters(ConsoleExceptionFilter)
@UseGuards(ConsoleEnabled)
export class ConsoleIdentityProviderChangesController {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly pages: ConsolePages,
  ) {}

  @Get(`${PROVIDERS.slice(1)}/:id/edit`)
  async editForm(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    const provider = await visit.api.get<IdentityProviderView>(`/identity-providers/${segment(id)}`);
    if (!visit.can('system', 'write')) throw notAllowedToChange('identity providers', providerPath(provider.id));
    sendOutcome(reply, await providerFormPage(this.pages, visit, providerFormOf(provider), provider, fromFilesOf(provider), NO_ERRORS));
  }

  /** PATCH with every setting the form holds; the protocol and the id stay (the API refuses changing them). */
  @CookieForm()
  @Post(`${PROVIDERS.slice(1)}/:id/edit`)
  async update(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Body() body: Record<string, unknown> | undefined): Promise<void> {
    const visit = await this.sessions.submit(request, reply, body, `${providerPath(id)}/edit`);
    const current = await visit.api.get<IdentityProviderView>(`/identity-providers/${segment(id)}`);
    const files = fromFilesOf(current);
    const form = { ...providerFormFrom(body, current.protocol), id: current.id };
    const prepared = providerRequest(form, current, files);
    if ('problems' in prepared) return void sendOutcome(reply, await providerFormPage(this.pages, visit, form, current, files, formErrors(prepared.problems), 400));
    const result = await formCall(() => visit.api.send<IdentityProviderView>('PATCH', `/identity-providers/${segment(current.id)}`, prepared.body));
    if ('refused' in result) {
      const errors = formErrors([problemOfRefusal(result.refused, PROVIDER_FIELDS)]);
      return void sendOutcome(reply, await providerFormPage(this.pages, visit, form, current, files, errors, result.refused.status));
    }
    await visit.leave({ notice: `${result.answer.name} is saved.` });
    sendOutcome(reply, { kind: 'redirect', status: 303, location: providerPath(current.id) });
  }

  @Get(`${PROVIDERS.slice(1)}/:id/confirm/delete`)
  async confirm(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    const provider = await visit.api.get<IdentityProviderView & { linked_people?: number }>(`/identity-providers/${segment(id)}`);
    const page = providerPath(provider.id);
    const linked = provider.linked_people ?? 0;
    const data = {
      question: `Delete the identity provider ${provider.name}?`,
      consequence:
        `Nobody can sign in through it any more. ${linked === 0 ? 'No one is linked to it.' : `The links of ${people(linked)} to it are removed; their accounts stay, but those without a password cannot sign in until they are linked to another provider or given a password.`}` +
        ' This cannot be undone.',
      button: 'Delete the provider',
      danger: true,
      action: `${page}/delete`,
      cancel: page,
      reauthenticate: !visit.recentlySignedIn,
    };
    sendOutcome(reply, await this.pages.page(visit, 'confirm', 'Delete the identity provider', data, { section: PROVIDERS }));
  }

  @CookieForm()
  @Post(`${PROVIDERS.slice(1)}/:id/delete`)
  async delete(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Body() body: Record<string, unknown> | undefined): Promise<void> {
    const confirmation = `${providerPath(id)}/confirm/delete`;
    const visit = await this.sessions.submit(request, reply, body, confirmation);
    this.sessions.requireRecentSignIn(visit, confirmation);
    const provider = await visit.api.get<IdentityProviderView>(`/identity-providers/${segment(id)}`);
    const deleted = await formCall(() => visit.api.send<{ links_removed: number }>('DELETE', `/identity-providers/${segment(provider.id)}`));
    // Refused while a client lets people in only through it: the API's message says which, and what to change first.
    if ('refused' in deleted) throw new ConsoleRefusal(deleted.refused.status, 'Cannot be deleted now', deleted.refused.message, { retryUrl: providerPath(provider.id) });
    const links = deleted.answer.links_removed;
    await visit.leave({ notice: `${provider.name} was deleted.${links === 0 ? '' : ` The links of ${people(links)} to it were removed.`}` });
    sendOutcome(reply, { kind: 'redirect', status: 303, location: PROVIDERS });
  }
}
