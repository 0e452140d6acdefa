import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Clock } from '../../common/clock.js';
import { AdminRoute } from '../admin-access.js';
import { ADMIN_API, sendAdminJson } from '../admin-reply.js';
import { OverviewStore } from './overview.store.js';

/** The admin console's dashboard counts (issue 48): for every administrator, numbers only. */
@Controller(ADMIN_API)
export class OverviewController {
  constructor(
    private readonly store: OverviewStore,
    private readonly clock: Clock,
  ) {}

  @Get('overview')
  @AdminRoute('overview', 'read')
  async overview(@Res() reply: FastifyReply): Promise<void> {
    const counts = await this.store.counts(this.clock.now());
    sendAdminJson(reply, { people: { total: counts.people, active: counts.activePeople }, clients: { total: counts.clients }, sessions: { live: counts.liveSessions } });
  }
}
