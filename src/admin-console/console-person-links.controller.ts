import { Body, Controller, Get, Param, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendOutcome, type InteractionOutcome } from '../auth/interaction/interaction-responder.js';
import { CookieForm } from '../http/cookie-forms.js';
import { ConsoleEnabled } from './console-enabled.guard.js';
import { ConsoleExceptionFilter } from './console-exception.filter.js';
import { formCall, formErrors, formText, INPUT_OR_UNKNOWN_REFUSALS, NO_ERRORS, problemOfRefusal, titleWith, type FieldProblem, type FieldRule, type FormErrors } from './console-forms.js';
import { ConsolePages } from './console-pages.js';
import { CONSOLE, segment } from './console-paths.js';
import { ConsoleSessions } from './console-sessions.js';
import type { ConsoleVisit } from './console-visit.js';

const PEOPLE = `${CONSOLE}/people`;

/** Where the API's messages about a link go (people-requests.ts, upstream-accounts.service.ts word them). */
const LINK_FIELD_RULES: readonly FieldRule[] = [
  { field: 'subject', matches: /subject|linked to another person/ },
  { field: 'identity_provider', matches: /identity.provider/ },
];

/**
 * A person's links to upstream identity providers and the emails that let them in (issue 48):
 * link an upstream identity (POST /people/{id}/upstream-links), after a recent sign-in since
 * whoever holds that identity signs in as the person from then on; unlink one after a confirmation;
 * send an address verification or an invitation to choose a password. The API decides who may
 * (of an administrator, an owner alone).
 */
@Controller()
@UseFilters(ConsoleExceptionFilter)
@UseGuards(ConsoleEnabled)
export class ConsolePersonLinksController {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly pages: ConsolePages,
  ) {}

  @Get(`${PEOPLE.slice(1)}/:id/upstream-links/new`)
  async linkForm(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    const person = await visit.api.get(`/people/${segment(id)}`);
    sendOutcome(reply, await this.linkPage(visit, person, { identity_provider: '', subject: '' }));
  }

  @CookieForm()
  @Post(`${PEOPLE.slice(1)}/:id/upstream-links`)
  async link(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Body() body: Record<string, unknown> | undefined): Promise<void> {
    const page = personPage(id);
    const visit = await this.sessions.submit(request, reply, body, `${page}/upstream-links/new`);
    this.sessions.requireRecentSignIn(visit, `${page}/upstream-links/new`);
    const person = await visit.api.get(`/people/${segment(id)}`);
    const values = { identity_provider: formText(body?.identity_provider, 300).trim(), subject: formText(body?.subject, 300).trim() };
    const missing: FieldProblem[] = [
      ...(values.identity_provider === '' ? [{ field: 'identity_provider', message: 'Give the id of the identity provider.' }] : []),
      ...(values.subject === '' ? [{ field: 'subject', message: "Give the person's subject at that provider." }] : []),
    ];
    if (missing.length > 0) return void sendOutcome(reply, await this.linkPage(visit, person, values, formErrors(missing), 400));
    // The person was found just now: a 404 here is the provider.
    const result = await formCall(() => visit.api.send('POST', `/people/${segment(id)}/upstream-links`, values), INPUT_OR_UNKNOWN_REFUSALS);
    if ('refused' in result) return void sendOutcome(reply, await this.linkPage(visit, person, values, formErrors([problemOfRefusal(result.refused, LINK_FIELD_RULES)]), result.refused.status));
    await visit.leave({ notice: `${String(person.username)} is linked to ${values.subject} at ${values.identity_provider}.` });
    sendOutcome(reply, { kind: 'redirect', status: 303, location: page });
  }

  @Get(`${PEOPLE.slice(1)}/:id/upstream-links/:idp/:subject/remove`)
  async confirmUnlink(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Param('idp') idp: string, @Param('subject') subject: string): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    const person = await visit.api.get(`/people/${segment(id)}`);
    const page = personPage(id);
    const data = {
      question: `Unlink ${String(person.username)} from ${subject} at ${idp}?`,
      consequence: 'Signing in through that provider with that identity no longer signs them in. Their sessions go on; end them too if the identity is no longer theirs.',
      button: 'Unlink',
      danger: true,
      action: `${page}/upstream-links/${segment(idp)}/${segment(subject)}/remove`,
      cancel: page,
      reauthenticate: false,
    };
    sendOutcome(reply, await this.pages.page(visit, 'confirm', 'Unlink an identity', data, { section: PEOPLE }));
  }

  @CookieForm()
  @Post(`${PEOPLE.slice(1)}/:id/upstream-links/:idp/:subject/remove`)
  async unlink(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Param('idp') idp: string, @Param('subject') subject: string, @Body() body: Record<string, unknown> | undefined): Promise<void> {
    const page = personPage(id);
    const visit = await this.sessions.submit(request, reply, body, `${page}/upstream-links/${segment(idp)}/${segment(subject)}/remove`);
    await visit.api.send('DELETE', `/people/${segment(id)}/upstream-links/${segment(idp)}/${segment(subject)}`);
    await visit.leave({ notice: `The link to ${subject} at ${idp} is removed.` });
    sendOutcome(reply, { kind: 'redirect', status: 303, location: page });
  }

  /** An email confirming the person's address; the link in it is never shown here (nor returned by the API). */
  @CookieForm()
  @Post(`${PEOPLE.slice(1)}/:id/email-verification`)
  async verifyEmail(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Body() body: Record<string, unknown> | undefined): Promise<void> {
    const page = personPage(id);
    const visit = await this.sessions.submit(request, reply, body, page);
    const sent = await visit.api.send('POST', `/people/${segment(id)}/email-verification`);
    await visit.leave({ notice: `A link confirming the address is on its way to ${String(sent.email)}.` });
    sendOutcome(reply, { kind: 'redirect', status: 303, location: page });
  }

  /** An invitation to choose a first password (a person without one). */
  @CookieForm()
  @Post(`${PEOPLE.slice(1)}/:id/invitation`)
  async invite(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Body() body: Record<string, unknown> | undefined): Promise<void> {
    const page = personPage(id);
    const visit = await this.sessions.submit(request, reply, body, page);
    const sent = await visit.api.send('POST', `/people/${segment(id)}/invitation`);
    await visit.leave({ notice: `An invitation to choose a password is on its way to ${String(sent.email)}.` });
    sendOutcome(reply, { kind: 'redirect', status: 303, location: page });
  }

  /** The link form; the providers offered as suggestions to those who may read them (the owner, the auditor), typed by the others. */
  private async linkPage(visit: ConsoleVisit, person: Record<string, unknown>, values: Record<string, string>, errors: FormErrors = NO_ERRORS, status = 200): Promise<InteractionOutcome> {
    const listed = visit.can('system', 'read') ? await visit.api.answer('GET', '/identity-providers', { limit: '200' }) : undefined;
    const providers = listed?.status === 200 ? (listed.body.items as { id: string; name: string }[]) : [];
    const data = { person, values, errors, providers, reauthenticate: !visit.recentlySignedIn };
    return this.pages.page(visit, 'person-link', titleWith(errors, `Link ${String(person.username)} to an identity`), data, { section: PEOPLE, status });
  }
}

function personPage(id: string): string {
  return `${PEOPLE}/${segment(id)}`;
}
