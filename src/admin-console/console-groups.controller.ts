import { Body, Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendOutcome, type InteractionOutcome } from '../auth/interaction/interaction-responder.js';
import { CookieForm } from '../http/cookie-forms.js';
import { notAllowedToChange } from './console-errors.js';
import { ConsoleEnabled } from './console-enabled.guard.js';
import { ConsoleExceptionFilter } from './console-exception.filter.js';
import { formCall, formErrors, formText, NO_ERRORS, problemOfRefusal, titleWith, type FieldProblem, type FieldRule, type FormErrors } from './console-forms.js';
import { groupPage, groupPath, GROUPS, type GroupView } from './console-group-page.js';
import { listPage } from './console-lists.js';
import { ConsolePages } from './console-pages.js';
import { segment } from './console-paths.js';
import { ConsoleSessions } from './console-sessions.js';
import type { ConsoleVisit } from './console-visit.js';

/** The group form as typed. */
interface GroupForm {
  display_name: string;
  external_id: string;
}

/** Where the API's refusals of a group's names are shown (GroupsService's messages name the field). */
const GROUP_FIELDS: readonly FieldRule[] = [
  { field: 'external_id', matches: /externalId/ },
  { field: 'display_name', matches: /name/i },
];

/**
 * Groups (issue 48 on issue 46's groups): the list, paged as the API pages it (by name); one group
 * with its members; the form that creates one and the one that renames it. Read by the auditor and
 * the owner, changed by the owner (the API's 'system' area): membership opens applications.
 * Members and deletion: ConsoleGroupMembersController.
 */
@Controller()
@UseFilters(ConsoleExceptionFilter)
@UseGuards(ConsoleEnabled)
export class ConsoleGroupsController {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly pages: ConsolePages,
  ) {}

  @Get(GROUPS.slice(1))
  async list(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Query('cursor') cursor?: unknown): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    const page = await listPage(visit.api, '/groups', GROUPS, {}, cursor);
    const data = { groups: page.items, next: page.next, first: page.first, canWrite: visit.can('system', 'write') };
    sendOutcome(reply, await this.pages.page(visit, 'groups', 'Groups', data, { section: GROUPS }));
  }

  @Get(`${GROUPS.slice(1)}/new`)
  async newForm(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    if (!visit.can('system', 'write')) throw notAllowedToChange('groups', GROUPS);
    sendOutcome(reply, await this.formPage(visit, undefined, { display_name: '', external_id: '' }, NO_ERRORS));
  }

  @CookieForm()
  @Post(GROUPS.slice(1))
  async create(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Body() body: Record<string, unknown> | undefined): Promise<void> {
    const visit = await this.sessions.submit(request, reply, body, `${GROUPS}/new`);
    const form = groupForm(body);
    const missing = missingName(form);
    if (missing) return void sendOutcome(reply, await this.formPage(visit, undefined, form, formErrors([missing]), 400));
    const external = form.external_id.trim();
    const result = await formCall(() => visit.api.send<GroupView>('POST', '/groups', { display_name: form.display_name, ...(external === '' ? {} : { external_id: external }) }));
    if ('refused' in result) return void sendOutcome(reply, await this.formPage(visit, undefined, form, formErrors([problemOfRefusal(result.refused, GROUP_FIELDS)]), result.refused.status));
    await visit.leave({ notice: `The group ${result.answer.display_name} is created. Add its members below.` });
    sendOutcome(reply, { kind: 'redirect', status: 303, location: groupPath(result.answer.id) });
  }

  @Get(`${GROUPS.slice(1)}/:id`)
  async show(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    sendOutcome(reply, await groupPage(this.pages, visit, await visit.api.get<GroupView>(`/groups/${segment(id)}`)));
  }

  @Get(`${GROUPS.slice(1)}/:id/edit`)
  async editForm(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    const group = await visit.api.get<GroupView>(`/groups/${segment(id)}`);
    if (!visit.can('system', 'write')) throw notAllowedToChange('groups', groupPath(group.id));
    sendOutcome(reply, await this.formPage(visit, group, { display_name: group.display_name, external_id: group.external_id ?? '' }, NO_ERRORS));
  }

  /** Renames the group, or sets or clears its external id (PATCH: an empty external id clears it). */
  @CookieForm()
  @Post(`${GROUPS.slice(1)}/:id/edit`)
  async update(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Body() body: Record<string, unknown> | undefined): Promise<void> {
    const visit = await this.sessions.submit(request, reply, body, `${groupPath(id)}/edit`);
    const group = await visit.api.get<GroupView>(`/groups/${segment(id)}`);
    const form = groupForm(body);
    const missing = missingName(form);
    if (missing) return void sendOutcome(reply, await this.formPage(visit, group, form, formErrors([missing]), 400));
    const external = form.external_id.trim();
    const result = await formCall(() => visit.api.send<GroupView>('PATCH', `/groups/${segment(group.id)}`, { display_name: form.display_name, external_id: external === '' ? null : external }));
    if ('refused' in result) return void sendOutcome(reply, await this.formPage(visit, group, form, formErrors([problemOfRefusal(result.refused, GROUP_FIELDS)]), result.refused.status));
    await visit.leave({ notice: `The group ${result.answer.display_name} is saved.` });
    sendOutcome(reply, { kind: 'redirect', status: 303, location: groupPath(group.id) });
  }

  /** The form that creates a group (`group` undefined) or changes one. */
  private formPage(visit: ConsoleVisit, group: GroupView | undefined, values: GroupForm, errors: FormErrors, status = 200): Promise<InteractionOutcome> {
    const title = group === undefined ? 'Create a group' : `Edit the group ${group.display_name}`;
    const data = { group, values, errors, action: group === undefined ? GROUPS : `${groupPath(group.id)}/edit`, cancel: group === undefined ? GROUPS : groupPath(group.id) };
    return this.pages.page(visit, 'group-form', titleWith(errors, title), { ...data, heading: title }, { section: GROUPS, status });
  }
}

function groupForm(body: Record<string, unknown> | undefined): GroupForm {
  return { display_name: formText(body?.display_name, 300), external_id: formText(body?.external_id, 300) };
}

function missingName(form: GroupForm): FieldProblem | undefined {
  return form.display_name.trim() === '' ? { field: 'display_name', message: 'Give the group a name.' } : undefined;
}
