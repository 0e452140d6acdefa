import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Clock } from '../../common/clock.js';
import { InstancesService } from '../../instances/instances.service.js';
import { ThisInstance } from '../../instances/this-instance.js';
import { AdminRoute } from '../admin-access.js';
import { ADMIN_API, sendAdminJson } from '../admin-reply.js';
import type { InstanceItem } from './instance-item.js';

/**
 * The server instances seen in the last day (issue 48, the console's dashboard), for every
 * administrator: hosts and versions, no person's data. `answered_by` names the instance that
 * answered, so that a reader can tell which row is the one behind their load balancer's choice.
 */
@Controller(ADMIN_API)
export class InstancesController {
  constructor(
    private readonly instances: InstancesService,
    private readonly thisInstance: ThisInstance,
    private readonly clock: Clock,
  ) {}

  @Get('instances')
  @AdminRoute('overview', 'read')
  async list(@Res() reply: FastifyReply): Promise<void> {
    const seen = await this.instances.recent(this.clock.now());
    const items = seen.map((instance): InstanceItem => ({
      id: instance.id,
      hostname: instance.hostname,
      pid: instance.pid,
      version: instance.version,
      node: instance.node,
      started_at: instance.startedAt.toISOString(),
      last_seen_at: instance.lastSeenAt.toISOString(),
      live: instance.live,
    }));
    sendAdminJson(reply, { items, answered_by: this.thisInstance.id });
  }
}
