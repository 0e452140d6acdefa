import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Clock } from '../../common/clock.js';
import { AdminRoute } from '../admin-access.js';
import { ADMIN_API, sendAdminJson } from '../admin-reply.js';
import { OverviewStore } from './overview.store.js';

/**
 * The admin console's dashboard counts (issue 48): for every administrator, numbers only (never
 * who or which). Live tokens are not among them: counting them reads the whole tokens table
 * (docs/reference/admin-api.md says why).
 */
@Controller(ADMIN_API)
export class OverviewController {
  constructor(
    private readonly store: OverviewStore,
    private readonly clock: Clock,
  ) {}

  @Get('overview')
  @AdminRoute('overview', 'read')
  async overview(@Res() reply: FastifyReply): Promise<void> {
    const { people, activePeople, clients, liveSessions, lastDay } = await this.store.counts(this.clock.now());
    sendAdminJson(reply, {
      people: { total: people, active: activePeople },
      clients: { total: clients },
      sessions: { live: liveSessions },
      last_24_hours: { sign_ins: lastDay.signIns, failed_sign_ins: lastDay.failedSignIns, new_devices: lastDay.newDevices, consents_given: lastDay.consentsGiven, consents_withdrawn: lastDay.consentsWithdrawn },
    });
  }
}
