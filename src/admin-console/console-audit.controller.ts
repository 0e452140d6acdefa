import { Controller, Get, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SIGN_IN_FAILURES } from '../audit/sign-in-failures.js';
import { sendOutcome } from '../auth/interaction/interaction-responder.js';
import { AdminApiRefusal } from './console-errors.js';
import { ConsoleEnabled } from './console-enabled.guard.js';
import { ConsoleExceptionFilter } from './console-exception.filter.js';
import { listPage, textParam, type ListPage } from './console-lists.js';
import { ConsolePages } from './console-pages.js';
import { CONSOLE, segment } from './console-paths.js';
import { ConsoleSessions } from './console-sessions.js';

const AUDIT = `${CONSOLE}/audit`;
const FILTERS = ['actor', 'event', 'person', 'client', 'since', 'until'] as const;
/** Offered as the event field's suggestions: the questions an administrator asks most. */
const KNOWN_EVENTS = [...SIGN_IN_FAILURES, 'user.', 'client.', 'consent.', 'factor.', 'admin_role.', 'signing_key.rotated'];
/** A date and a time without an offset, as people type them: the form's label says it is UTC. */
const LOCAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/;

interface AuditEventView {
  at: string;
  actor: string;
  subject: string;
  action: string;
  ip: string | null;
  details: unknown;
}

/**
 * The audit log (issue 48), filtered by actor, event, person, client and time and paged, as the
 * admin API serves it; a filter the API refuses is shown with its message above the form.
 */
@Controller()
@UseFilters(ConsoleExceptionFilter)
@UseGuards(ConsoleEnabled)
export class ConsoleAuditController {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly pages: ConsolePages,
  ) {}

  @Get(AUDIT.slice(1))
  async list(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Query() query: Record<string, unknown>): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    const filters = Object.fromEntries(FILTERS.map((name) => [name, textParam(query[name])])) as Record<(typeof FILTERS)[number], string>;
    const sent = { ...filters, since: instant(filters.since), until: instant(filters.until) };
    let page: ListPage<AuditEventView> = { items: [] };
    let error: string | undefined;
    try {
      page = await listPage<AuditEventView>(visit.api, '/audit-events', AUDIT, sent, query.cursor);
    } catch (refusal) {
      if (!(refusal instanceof AdminApiRefusal) || refusal.status !== 400) throw refusal;
      error = refusal.message;
    }
    const events = page.items.map((event) => ({ ...event, actorLink: linkOf(event.actor), subjectLink: linkOf(event.subject) }));
    const data = { filters, events, error, next: page.next, first: page.first, knownEvents: KNOWN_EVENTS };
    sendOutcome(reply, await this.pages.page(visit, 'audit', 'Audit log', data, { section: AUDIT, status: error ? 400 : 200 }));
  }
}

/** A time without an offset as the RFC 3339 instant the API takes (UTC, as the label says); anything else as typed, for the API to judge. */
function instant(value: string): string {
  if (!LOCAL_TIME.test(value)) return value;
  return value.length === 16 ? `${value}:00Z` : `${value}Z`;
}

/** The console page of an actor or subject: a person's or a client's. */
function linkOf(name: string): string | undefined {
  if (name.startsWith('user:')) return `${CONSOLE}/people/${segment(name.slice('user:'.length))}`;
  if (name.startsWith('client:')) return `${CONSOLE}/clients/${segment(name.slice('client:'.length))}`;
  return undefined;
}
