import { Body, Controller, Get, Param, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendOutcome, type InteractionOutcome } from '../auth/interaction/interaction-responder.js';
import { CookieForm } from '../http/cookie-forms.js';
import { ConsoleEnabled } from './console-enabled.guard.js';
import { ConsoleExceptionFilter } from './console-exception.filter.js';
import { formCall, formErrors, NO_ERRORS, titleWith, type FormErrors } from './console-forms.js';
import { ConsolePages } from './console-pages.js';
import { CONSOLE, segment } from './console-paths.js';
import { ConsoleSessions } from './console-sessions.js';
import type { ConsoleVisit } from './console-visit.js';

const PEOPLE = `${CONSOLE}/people`;
const OWNER = 'owner';

interface RoleChoice {
  role: string;
  scope: string;
  description: string;
}

/**
 * A person's administrator roles (issue 48): shown on their page to whoever may read people, and
 * changed here by an owner (PUT and DELETE /people/{id}/roles/{role}, the API's `system` area:
 * nobody else gets past it). Giving a role gives its admin scope to every sign-in of the person, so
 * the change needs a recent sign-in, as deleting does.
 */
@Controller()
@UseFilters(ConsoleExceptionFilter)
@UseGuards(ConsoleEnabled)
export class ConsolePersonRolesController {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly pages: ConsolePages,
  ) {}

  @Get(`${PEOPLE.slice(1)}/:id/roles`)
  async form(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    const person = await visit.api.get(`/people/${segment(id)}`);
    sendOutcome(reply, await this.rolesPage(visit, person, rolesOf(person)));
  }

  /**
   * Applies the difference between the roles ticked and the roles held. Removing the owner role
   * goes first: the one refusal that depends on the others (409, the last owner) then leaves
   * nothing half done; a caller who may not change roles is refused (403) at the first call.
   */
  @CookieForm()
  @Post(`${PEOPLE.slice(1)}/:id/roles`)
  async change(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Body() body: Record<string, unknown> | undefined): Promise<void> {
    const page = `${PEOPLE}/${segment(id)}`;
    const visit = await this.sessions.submit(request, reply, body, `${page}/roles`);
    this.sessions.requireRecentSignIn(visit, `${page}/roles`);
    const person = await visit.api.get(`/people/${segment(id)}`);
    const catalog = await this.catalog(visit);
    const wanted = [body?.roles].flat().filter((role): role is string => typeof role === 'string' && catalog.some((choice) => choice.role === role));
    const held = rolesOf(person);
    const removed = held.filter((role) => !wanted.includes(role)).sort((a, b) => Number(b === OWNER) - Number(a === OWNER));
    const added = wanted.filter((role) => !held.includes(role));
    const result = await formCall(async () => {
      for (const role of removed) await visit.api.send('DELETE', `/people/${segment(id)}/roles/${segment(role)}`);
      for (const role of added) await visit.api.send('PUT', `/people/${segment(id)}/roles/${segment(role)}`);
    });
    if ('refused' in result) return void sendOutcome(reply, await this.rolesPage(visit, person, wanted, formErrors([{ field: 'roles', message: result.refused.message }]), result.refused.status));
    const now = [...held.filter((role) => !removed.includes(role)), ...added];
    const notice = removed.length + added.length === 0 ? 'Nothing was changed.' : `${String(person.username)} now holds ${now.length === 0 ? 'no administrator role' : `the roles ${now.join(', ')}`}.`;
    await visit.leave({ notice });
    sendOutcome(reply, { kind: 'redirect', status: 303, location: page });
  }

  /** The roles and what each may do, as the API describes them (GET /roles). */
  private async catalog(visit: ConsoleVisit): Promise<RoleChoice[]> {
    return (await visit.api.get<{ items: RoleChoice[] }>('/roles')).items;
  }

  private async rolesPage(visit: ConsoleVisit, person: Record<string, unknown>, ticked: string[], errors: FormErrors = NO_ERRORS, status = 200): Promise<InteractionOutcome> {
    const data = { person, roles: await this.catalog(visit), ticked, errors, canChange: visit.can('system', 'write'), reauthenticate: !visit.recentlySignedIn };
    return this.pages.page(visit, 'person-roles', titleWith(errors, `Roles of ${String(person.username)}`), data, { section: PEOPLE, status });
  }
}

function rolesOf(person: Record<string, unknown>): string[] {
  return Array.isArray(person.roles) ? person.roles.map(String) : [];
}
