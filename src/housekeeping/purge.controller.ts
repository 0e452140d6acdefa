import { Controller, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { adminCaller, AdminRoute } from '../admin/admin-access.js';
import { ADMIN_API, sendAdminJson } from '../admin/admin-reply.js';
import { adminBody } from '../admin/system/admin-input.js';
import { purgeCounts, PurgeService } from './purge.service.js';

/**
 * The purge of expired codes, tokens, sessions and the rest (issue 48), once, now: what the CLI's
 * `purge` does, through the same PurgeService, for deployments that run instances with
 * PURGE_INTERVAL_SECONDS=0 and no shell on the server. An owner's act (it deletes rows of every
 * person's), audited (`housekeeping.purged`, with the counts, the caller and their address), which
 * the CLI's run, made by cron every few minutes, is not.
 */
@Controller(ADMIN_API)
export class PurgeController {
  constructor(private readonly purge: PurgeService) {}

  @Post('housekeeping/purge')
  @AdminRoute('system', 'write')
  async run(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    // It takes nothing: a body, if any, must be an empty object (a field there would be a mistake, not an option).
    if (request.body !== undefined && request.body !== null) adminBody(request, []);
    sendAdminJson(reply, purgeCounts(await this.purge.purge({ requestedBy: adminCaller(request) })));
  }
}
