import { Controller, Get, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SIGN_IN_FAILURES } from '../audit/sign-in-failures.js';
import { sendOutcome } from '../auth/interaction/interaction-responder.js';
import { Clock } from '../common/clock.js';
import type { ConsoleApi } from './console-api.js';
import { ConsoleEnabled } from './console-enabled.guard.js';
import { ConsoleExceptionFilter } from './console-exception.filter.js';
import { instancesPanel } from './console-instances.js';
import { ConsolePages } from './console-pages.js';
import { CONSOLE } from './console-paths.js';
import { ConsoleSessions } from './console-sessions.js';
import type { ConsoleVisit } from './console-visit.js';
import { InProcessHttp } from './in-process-http.js';

/** How many the dashboard shows. */
const RECENT = 8;

/** GET /overview's last_24_hours, as the API names them. */
interface LastDayCounts {
  sign_ins: number;
  failed_sign_ins: number;
  new_devices: number;
  consents_given: number;
  consents_withdrawn: number;
}

interface DashboardCounts {
  people: number;
  active: number;
  clients: number;
  sessions: number;
  lastDay: LastDayCounts;
}

interface AuditEventView {
  id: string;
  at: string;
  actor: string;
  ip: string | null;
  action: string;
  subject: string;
  details: Record<string, unknown>;
}

/**
 * The dashboard (issue 48): this instance's readiness (/health/ready), doctor's findings (for the
 * roles that read the system), the instances seen and which of them still beat, how many people,
 * clients and live sessions there are and how many sign-ins (failed ones, new devices, consents,
 * withdrawals) the last 24 hours saw, and the latest failed sign-ins from the audit log. Each from
 * the API as this administrator may read it.
 */
@Controller()
@UseFilters(ConsoleExceptionFilter)
@UseGuards(ConsoleEnabled)
export class ConsoleDashboardController {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly pages: ConsolePages,
    private readonly http: InProcessHttp,
    private readonly clock: Clock,
  ) {}

  @Get(CONSOLE.slice(1))
  async dashboard(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    const [health, instances, counts, doctor, failures] = await Promise.all([this.health(request.ip), instancesPanel(visit.api, this.clock.now()), this.counts(visit.api), this.doctor(visit), this.failures(visit)]);
    sendOutcome(reply, await this.pages.page(visit, 'dashboard', 'Dashboard', { health, instances, counts, doctor, failures }));
  }

  /** The readiness probe's own answer, as the load balancer sees it. */
  private async health(remoteAddress: string): Promise<{ ready: boolean; checks: { name: string; status: string }[] }> {
    const answer = await this.http.send({ method: 'GET', path: '/health/ready', remoteAddress });
    const body = JSON.parse(answer.body || '{}') as { details?: Record<string, { status?: string }> };
    return { ready: answer.status === 200, checks: Object.entries(body.details ?? {}).map(([name, check]) => ({ name, status: String(check.status ?? 'unknown') })) };
  }

  private async counts(api: ConsoleApi): Promise<DashboardCounts | null> {
    const answer = await api.answer('GET', '/overview');
    if (answer.status !== 200) return null;
    const body = answer.body as { people: { total: number; active: number }; clients: { total: number }; sessions: { live: number }; last_24_hours: LastDayCounts };
    return { people: body.people.total, active: body.people.active, clients: body.clients.total, sessions: body.sessions.live, lastDay: body.last_24_hours };
  }

  /** Doctor's failures and warnings, for the auditor and the owner (null for the other roles). */
  private async doctor(visit: ConsoleVisit): Promise<{ ok: boolean; failures: number; warnings: number; findings: { id: string; status: string; detail: string; fix?: string }[] } | null> {
    if (!visit.can('system', 'read')) return null;
    const answer = await visit.api.answer('GET', '/doctor');
    if (answer.status !== 200) return null;
    const report = answer.body as { ok: boolean; failures: number; warnings: number; checks: { id: string; status: string; detail: string; fix?: string }[] };
    return { ok: report.ok, failures: report.failures, warnings: report.warnings, findings: report.checks.filter((check) => check.status === 'fail' || check.status === 'warn') };
  }

  /** The newest failed sign-ins of every kind, newest first. */
  private async failures(visit: ConsoleVisit): Promise<(AuditEventView & { personId?: string })[]> {
    if (!visit.can('audit', 'read')) return [];
    const pages = await Promise.all(SIGN_IN_FAILURES.map((event) => visit.api.answer('GET', '/audit-events', { event, limit: String(RECENT) })));
    const events = pages.flatMap((page) => (page.status === 200 ? (page.body.items as AuditEventView[]) : []));
    return events
      .sort((a, b) => (a.at === b.at ? (a.id < b.id ? 1 : -1) : a.at < b.at ? 1 : -1))
      .slice(0, RECENT)
      .map((event) => ({ ...event, personId: event.subject.startsWith('user:') ? event.subject.slice('user:'.length) : undefined }));
  }
}
