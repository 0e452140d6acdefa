import { Controller, Get, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { validate as isUuid } from 'uuid';
import type { AuditEvent } from '../../audit/audit-event.entity.js';
import { parseAuditFilter, type AuditFilter } from '../../audit/audit-filter.js';
import { auditEventView, AuditService } from '../../audit/audit.service.js';
import { AdminRoute } from '../admin-access.js';
import { parseAdminPage, sendAdminPage, type AdminCursor } from '../admin-paging.js';
import { ADMIN_API } from '../admin-reply.js';
import { adminQuery, invalidCursor } from './admin-input.js';

const FILTERS = ['actor', 'event', 'person', 'client', 'since', 'until'] as const;

/**
 * The audit log (issue 48), read by every administrator ("why did that sign-in fail"): filtered by
 * actor, event, person, client and time, newest first, paged (GET /audit-events) or whole as JSON
 * lines (GET /audit-events/export). `audit:list` reads it through the same filters and query.
 */
@Controller(ADMIN_API)
export class AuditEventsController {
  constructor(private readonly audit: AuditService) {}

  @Get('audit-events')
  @AdminRoute('audit', 'read')
  async list(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const query = adminQuery(request, [...FILTERS, 'limit', 'cursor']);
    const filter = filterOf(query);
    const page = parseAdminPage(query);
    const rows = await this.audit.list(page.limit + 1, filter, page.after && position(page.after));
    sendAdminPage(request, reply, rows, page, auditEventView, (event) => ({ value: event.at.toISOString(), id: event.id }));
  }

  /**
   * Every matching event, newest first, one JSON object a line (application/x-ndjson): no page
   * limit, read from the database a batch at a time as the response is written. The first batch is
   * read before the status is sent, so a failing query is still an error answer, not a short 200.
   */
  @Get('audit-events/export')
  @AdminRoute('audit', 'read')
  async export(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const batches = this.audit.batches(filterOf(adminQuery(request, FILTERS)));
    const first = await batches.next();
    async function* lines(): AsyncGenerator<string> {
      if (first.done) return;
      yield toLines(first.value);
      for await (const batch of batches) yield toLines(batch);
    }
    void reply.code(200).header('Cache-Control', 'no-store').header('Content-Type', 'application/x-ndjson').send(Readable.from(lines()));
  }
}

function filterOf(query: Record<string, unknown>): AuditFilter {
  return parseAuditFilter(Object.fromEntries(FILTERS.map((name) => [name, query[name]])));
}

function toLines(events: readonly AuditEvent[]): string {
  return events.map((event) => `${JSON.stringify(auditEventView(event))}\n`).join('');
}

/** The cursor's time and id, checked: a forged one is a 400, never a database error. */
function position(cursor: AdminCursor): { at: Date; id: string } {
  const at = new Date(cursor.value);
  if (Number.isNaN(at.getTime()) || at.toISOString() !== cursor.value || !isUuid(cursor.id)) throw invalidCursor();
  return { at, id: cursor.id };
}
