import { Body, Controller, Get, Param, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendOutcome, type InteractionOutcome } from '../auth/interaction/interaction-responder.js';
import { CookieForm } from '../http/cookie-forms.js';
import type { Flash } from './console-cookie.js';
import { AdminApiRefusal } from './console-errors.js';
import { ConsoleEnabled } from './console-enabled.guard.js';
import { ConsoleExceptionFilter } from './console-exception.filter.js';
import { formCall, formErrors, NO_ERRORS, problemOfRefusal, titleWith, type FormErrors } from './console-forms.js';
import { ConsolePages } from './console-pages.js';
import { CONSOLE, segment } from './console-paths.js';
import { ConsoleSessions } from './console-sessions.js';
import type { ConsoleVisit } from './console-visit.js';
import { creationOf, newPersonForm, PERSON_FIELD_RULES, profileForm, profileFormOf, profilePatch, type NewPersonForm, type ProfileForm } from './person-form.js';

const PEOPLE = `${CONSOLE}/people`;
const NEW_PERSON = `${PEOPLE}/new`;

/**
 * Adding a person (POST /people, then an invitation to choose a password: POST
 * /people/{id}/invitation) and editing a person's profile (PATCH /people/{id}), issue 48. The API
 * checks what was typed; its message is shown beside the field it is about, the values kept.
 */
@Controller()
@UseFilters(ConsoleExceptionFilter)
@UseGuards(ConsoleEnabled)
export class ConsolePersonFormsController {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly pages: ConsolePages,
  ) {}

  @Get(NEW_PERSON.slice(1))
  async newPerson(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    sendOutcome(reply, await this.newPersonPage(visit, newPersonForm(undefined)));
  }

  @CookieForm()
  @Post(PEOPLE.slice(1))
  async create(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Body() body: Record<string, unknown> | undefined): Promise<void> {
    const visit = await this.sessions.submit(request, reply, body, NEW_PERSON);
    const form = newPersonForm(body);
    const creation = creationOf(form);
    if ('problems' in creation) return void sendOutcome(reply, await this.newPersonPage(visit, form, formErrors(creation.problems), 400));
    const result = await formCall(() => visit.api.send('POST', '/people', creation.body));
    if ('refused' in result) return void sendOutcome(reply, await this.newPersonPage(visit, form, formErrors([problemOfRefusal(result.refused, PERSON_FIELD_RULES)]), result.refused.status));
    const created = result.answer;
    const id = String(created.id);
    const username = String(created.username);
    await visit.leave(form.invite ? await this.invite(visit, id, username) : { notice: `${username} is added. They sign in once they have a password: send an invitation, or set one from the command line.` });
    sendOutcome(reply, { kind: 'redirect', status: 303, location: `${PEOPLE}/${segment(id)}` });
  }

  @Get(`${PEOPLE.slice(1)}/:id/edit`)
  async edit(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    const person = await visit.api.get(`/people/${segment(id)}`);
    sendOutcome(reply, await this.profilePage(visit, person, profileFormOf(person)));
  }

  /** Sends what the form changed, as a merge patch; nothing changed is nothing sent. */
  @CookieForm()
  @Post(`${PEOPLE.slice(1)}/:id/edit`)
  async update(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Body() body: Record<string, unknown> | undefined): Promise<void> {
    const page = `${PEOPLE}/${segment(id)}`;
    const visit = await this.sessions.submit(request, reply, body, `${page}/edit`);
    const person = await visit.api.get(`/people/${segment(id)}`);
    const form = profileForm(body);
    const patch = profilePatch(profileFormOf(person), form);
    if (Object.keys(patch).length > 0) {
      const result = await formCall(() => visit.api.send('PATCH', `/people/${segment(id)}`, patch));
      if ('refused' in result) return void sendOutcome(reply, await this.profilePage(visit, person, form, formErrors([problemOfRefusal(result.refused, PERSON_FIELD_RULES)]), result.refused.status));
    }
    await visit.leave({ notice: Object.keys(patch).length > 0 ? `The profile of ${String(person.username)} is saved.` : 'Nothing was changed.' });
    sendOutcome(reply, { kind: 'redirect', status: 303, location: page });
  }

  /** The invitation for a person just added; when it cannot be sent (email not set up), they are added all the same and a warning says why. */
  private async invite(visit: ConsoleVisit, id: string, username: string): Promise<Flash> {
    try {
      const sent = await visit.api.send('POST', `/people/${segment(id)}/invitation`);
      return { notice: `${username} is added, and an invitation to choose a password is on its way to ${String(sent.email)}.` };
    } catch (error) {
      if (!(error instanceof AdminApiRefusal) || error.status !== 409) throw error;
      return { warning: `${username} is added, but no invitation was sent: ${error.message}` };
    }
  }

  private newPersonPage(visit: ConsoleVisit, values: NewPersonForm, errors: FormErrors = NO_ERRORS, status = 200): Promise<InteractionOutcome> {
    return this.pages.page(visit, 'person-new', titleWith(errors, 'Add a person'), { values, errors }, { section: PEOPLE, status });
  }

  private profilePage(visit: ConsoleVisit, person: Record<string, unknown>, values: ProfileForm, errors: FormErrors = NO_ERRORS, status = 200): Promise<InteractionOutcome> {
    return this.pages.page(visit, 'person-edit', titleWith(errors, `Edit ${String(person.username)}`), { person, values, errors }, { section: PEOPLE, status });
  }
}
