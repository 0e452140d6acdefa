import { Body, Controller, Get, Param, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendOutcome } from '../auth/interaction/interaction-responder.js';
import { CookieForm } from '../http/cookie-forms.js';
import { ConsoleEnabled } from './console-enabled.guard.js';
import { ConsoleExceptionFilter } from './console-exception.filter.js';
import { formCall, formErrors, formText, INPUT_OR_UNKNOWN_REFUSALS } from './console-forms.js';
import { groupPage, groupPath, GROUPS, type GroupView } from './console-group-page.js';
import { personNamed } from './console-lookups.js';
import { ConsolePages } from './console-pages.js';
import { segment } from './console-paths.js';
import { ConsoleSessions } from './console-sessions.js';

/**
 * A group's members and its end (issue 48): a person added by username (the API names members by
 * id: the console finds the id through the people search), a member taken out, the group deleted
 * after a confirmation page. Each a POST with the session's CSRF token through the admin API, which
 * decides whether this administrator may (an owner) and audits it (group.members_changed, group.deleted).
 */
@Controller()
@UseFilters(ConsoleExceptionFilter)
@UseGuards(ConsoleEnabled)
export class ConsoleGroupMembersController {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly pages: ConsolePages,
  ) {}

  @CookieForm()
  @Post(`${GROUPS.slice(1)}/:id/members`)
  async add(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Body() body: Record<string, unknown> | undefined): Promise<void> {
    const visit = await this.sessions.submit(request, reply, body, groupPath(id));
    const group = await visit.api.get<GroupView>(`/groups/${segment(id)}`);
    const username = formText(body?.username, 200).trim();
    const problem = (message: string, status = 400) => groupPage(this.pages, visit, group, { username, errors: formErrors([{ field: 'username', message }]) }, status);
    if (username === '') return void sendOutcome(reply, await problem('Type the username of the person to add.'));
    const nobody = `Nobody has the username ${username}. Check the spelling, or find the person on the People page.`;
    // Longer than any username (64): no need to ask the people search, which takes at most 100 characters.
    if (username.length > 64) return void sendOutcome(reply, await problem(nobody));
    const found = await formCall(() => personNamed(visit.api, username), INPUT_OR_UNKNOWN_REFUSALS);
    if ('refused' in found) return void sendOutcome(reply, await problem(found.refused.message, found.refused.status));
    const person = found.answer;
    if (person === undefined) return void sendOutcome(reply, await problem(nobody));
    if (group.members.some((member) => member.type === 'user' && member.id === person.id)) {
      await visit.leave({ notice: `${person.username} is a member of ${group.display_name} already.` });
      return void sendOutcome(reply, { kind: 'redirect', status: 303, location: groupPath(group.id) });
    }
    const added = await formCall(() => visit.api.send('POST', `/groups/${segment(group.id)}/members`, { members: [{ type: 'user', id: person.id }] }), INPUT_OR_UNKNOWN_REFUSALS);
    if ('refused' in added) return void sendOutcome(reply, await problem(added.refused.message, added.refused.status));
    await visit.leave({ notice: `${person.username} is now a member of ${group.display_name}.` });
    sendOutcome(reply, { kind: 'redirect', status: 303, location: groupPath(group.id) });
  }

  /** Takes one member out, at once: it is undone by adding them again, so no confirmation page. */
  @CookieForm()
  @Post(`${GROUPS.slice(1)}/:id/members/:type/:member/remove`)
  async remove(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Param('type') type: string, @Param('member') member: string, @Body() body: Record<string, unknown> | undefined): Promise<void> {
    const visit = await this.sessions.submit(request, reply, body, groupPath(id));
    const group = await visit.api.get<GroupView>(`/groups/${segment(id)}`);
    const named = group.members.find((one) => one.type === type && one.id === member.toLowerCase());
    await visit.api.send('DELETE', `/groups/${segment(group.id)}/members/${segment(type)}/${segment(member)}`);
    const who = named?.name ?? (type === 'group' ? 'The group' : 'The person');
    await visit.leave({ notice: named === undefined ? `That member was not in ${group.display_name}.` : `${who} is no longer a member of ${group.display_name}.` });
    sendOutcome(reply, { kind: 'redirect', status: 303, location: groupPath(group.id) });
  }

  @Get(`${GROUPS.slice(1)}/:id/confirm/delete`)
  async confirm(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    const group = await visit.api.get<GroupView>(`/groups/${segment(id)}`);
    const page = groupPath(group.id);
    const members = group.members.length;
    const data = {
      question: `Delete the group ${group.display_name}?`,
      consequence:
        members === 0
          ? 'It has no members. An application open only to its members lets nobody in through it any more. This cannot be undone.'
          : `${members === 1 ? 'Its one member loses' : `Its ${members} members lose`} what the group gives: an application open only to its members refuses them at their next sign-in or token refresh, and new tokens no longer list it. Their accounts stay. This cannot be undone.`,
      button: 'Delete the group',
      danger: true,
      action: `${page}/delete`,
      cancel: page,
      reauthenticate: false,
    };
    sendOutcome(reply, await this.pages.page(visit, 'confirm', 'Delete the group', data, { section: GROUPS }));
  }

  @CookieForm()
  @Post(`${GROUPS.slice(1)}/:id/delete`)
  async delete(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Body() body: Record<string, unknown> | undefined): Promise<void> {
    const visit = await this.sessions.submit(request, reply, body, `${groupPath(id)}/confirm/delete`);
    const group = await visit.api.get<GroupView>(`/groups/${segment(id)}`);
    await visit.api.send('DELETE', `/groups/${segment(group.id)}`);
    await visit.leave({ notice: `The group ${group.display_name} was deleted.` });
    sendOutcome(reply, { kind: 'redirect', status: 303, location: GROUPS });
  }
}
