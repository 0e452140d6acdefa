import { Body, Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { validate as isUuid } from 'uuid';
import { sendOutcome } from '../auth/interaction/interaction-responder.js';
import { CookieForm } from '../http/cookie-forms.js';
import { withQuery, type ConsoleApi } from './console-api.js';
import { AdminApiRefusal, ConsoleRefusal, notAllowedToChange } from './console-errors.js';
import { ConsoleEnabled } from './console-enabled.guard.js';
import { ConsoleExceptionFilter } from './console-exception.filter.js';
import { listPage, textParam, type ListPage } from './console-lists.js';
import { liveSessionWithId, personNamed, type LiveSessionView } from './console-lookups.js';
import { ConsolePages } from './console-pages.js';
import { CONSOLE, consolePage, segment } from './console-paths.js';
import { ConsoleSessions } from './console-sessions.js';

const SESSIONS = `${CONSOLE}/sessions`;
const FILTERS = ['person', 'client', 'ip', 'device'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;

/**
 * Every person's live sessions (issue 48: the help desk ends a stolen laptop's sessions knowing its
 * device, address or application rather than its owner), filtered by person (a username or an id),
 * client, address and device and paged, as GET /admin/api/v1/sessions serves them; **End** after a
 * confirmation page, as on a person's page. People's readers see it; End is offered to their writers.
 */
@Controller()
@UseFilters(ConsoleExceptionFilter)
@UseGuards(ConsoleEnabled)
export class ConsoleLiveSessionsController {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly pages: ConsolePages,
  ) {}

  @Get(SESSIONS.slice(1))
  async list(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Query() query: Record<string, unknown>): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    const filters = Object.fromEntries(FILTERS.map((name) => [name, textParam(query[name])])) as Filters;
    let page: ListPage<LiveSessionView> = { items: [] };
    let error: string | undefined;
    try {
      page = await listPage<LiveSessionView>(visit.api, '/sessions', SESSIONS, { ...filters, person: await personFilter(visit.api, filters.person) }, query.cursor);
    } catch (refusal) {
      if (!(refusal instanceof AdminApiRefusal) || refusal.status !== 400) throw refusal;
      error = refusal.message;
    }
    const canWrite = visit.can('people', 'write');
    const here = listPath(request.url);
    const rows = page.items.map((session) => ({ ...session, endLink: canWrite ? withQuery(`${SESSIONS}/${segment(session.id)}/end`, { person: session.person.id, back: here }) : undefined }));
    // The form shows the person as typed; the paging links carry the id a username was looked up as.
    const data = { filters, sessions: rows, error, next: page.next, first: page.first, canWrite };
    sendOutcome(reply, await this.pages.page(visit, 'sessions', 'Sessions', data, { section: SESSIONS, status: error ? 400 : 200 }));
  }

  @Get(`${SESSIONS.slice(1)}/:id/end`)
  async confirmEnd(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Query() query: Record<string, unknown>): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    const back = listPath(query.back);
    if (!visit.can('people', 'write')) throw notAllowedToChange("people's sessions", back);
    const session = await this.live(visit.api, id, query.person, back);
    const data = {
      question: `End the session of ${session.person.username} ${describe(session)}?`,
      consequence: 'That browser is signed out, and applications registered for back-channel logout are told. Their other sessions go on.',
      button: 'End the session',
      danger: true,
      action: withQuery(`${SESSIONS}/${segment(id)}/end`, { person: session.person.id, back }),
      cancel: back,
      reauthenticate: false,
    };
    sendOutcome(reply, await this.pages.page(visit, 'confirm', 'End a session', data, { section: SESSIONS }));
  }

  @CookieForm()
  @Post(`${SESSIONS.slice(1)}/:id/end`)
  async end(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Query() query: Record<string, unknown>, @Body() form: Record<string, unknown> | undefined): Promise<void> {
    const back = listPath(query.back);
    const visit = await this.sessions.submit(request, reply, form, withQuery(`${SESSIONS}/${segment(id)}/end`, { person: textParam(query.person), back }));
    if (!visit.can('people', 'write')) throw notAllowedToChange("people's sessions", back);
    const session = await this.live(visit.api, id, query.person, back);
    await visit.api.send('DELETE', `/sessions/${segment(id)}`);
    await visit.leave({ notice: `The session of ${session.person.username} ${describe(session)} ended.` });
    sendOutcome(reply, { kind: 'redirect', status: 303, location: back });
  }

  /** The live session `id` of the person `personId` (the End link names both), or the 404 page: it ended meanwhile. */
  private async live(api: ConsoleApi, id: string, personId: unknown, back: string): Promise<LiveSessionView> {
    const person = textParam(personId);
    const session = isUuid(person) && isUuid(id) ? await liveSessionWithId(api, person, id) : undefined;
    if (session === undefined) throw new ConsoleRefusal(404, 'Not found', 'There is no such live session: it may have ended or expired already.', { retryUrl: back });
    return session;
  }
}

/** The person filter as the API takes it: an id as it is, a username looked up (the API's 400 when nobody has it). */
async function personFilter(api: ConsoleApi, typed: string): Promise<string> {
  if (typed === '' || isUuid(typed)) return typed;
  const person = await personNamed(api, typed);
  if (person === undefined) throw new AdminApiRefusal(400, 'invalid_request', `Nobody has the username "${typed}".`);
  return person.id;
}

/** "on Firefox on Windows, from 203.0.113.7": what tells the session apart from the person's others. */
function describe(session: LiveSessionView): string {
  return `${session.device ? `on ${session.device}` : 'on a device not recorded'}${session.ip ? `, from ${session.ip}` : ''}`;
}

/** Where to go back to: the sessions list as it was (its filters and page), never another page. */
function listPath(value: unknown): string {
  const page = consolePage(value);
  return page !== undefined && (page === SESSIONS || page.startsWith(`${SESSIONS}?`)) ? page : SESSIONS;
}
