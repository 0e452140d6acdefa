import { Controller, Post, Put, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ClientDeclarations, ClientDocumentError, planSummary, type ClientPlan } from '../../clients/client-declarations.js';
import type { ClientEditor } from '../../clients/client-change-policy.js';
import { ApiError } from '../../http/api-error.js';
import { AdminRoute } from '../admin-access.js';
import { ADMIN_API, sendAdminJson } from '../admin-reply.js';
import { adminBody } from '../system/admin-input.js';
import { adminClientEditor } from './admin-client-editor.js';

/**
 * Clients as code over the admin API (issue 48): what clients:apply does with a file, for a
 * document sent as `{"document": {"clients": […]}, "keep_unlisted": true | false}`, through the
 * same ClientDeclarations. The document is JSON (convert YAML before sending). Its secrets are read
 * only from environment variables LATCHKEY_CLIENT_… (client-secret-reference.ts: never a file,
 * never another variable). Every entry, and every deletion of a client it leaves out, is held to
 * the caller's rights (a client administrator never touches a client holding an owner-only
 * scope); a refused document changes nothing.
 *
 * Planning needs the right to write, although it writes nothing: the plan is what the caller's
 * rights allow (it answers 403 where applying would), and making it reads LATCHKEY_CLIENT_
 * variables to compare secrets and fetches sector_identifier_uri documents, none of which an
 * auditor's read-only token should set off.
 */
@Controller(ADMIN_API)
export class AdminClientDeclarationsController {
  constructor(private readonly declarations: ClientDeclarations) {}

  /** The plan, as clients:apply --dry-run prints it; nothing changes. */
  @Post('client-declarations/plan')
  @AdminRoute('clients', 'write')
  async plan(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const plan = await this.planOf(request, adminClientEditor(request));
    sendAdminJson(reply, { applied: false, summary: planSummary(plan.entries), plan: plan.entries });
  }

  /** Makes the clients match the document, in one transaction; answers the plan it applied. */
  @Put('client-declarations')
  @AdminRoute('clients', 'write')
  async apply(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const editor = adminClientEditor(request);
    const plan = await this.planOf(request, editor);
    await this.declarations.apply(plan, editor);
    sendAdminJson(reply, { applied: true, summary: planSummary(plan.entries), plan: plan.entries });
  }

  private async planOf(request: FastifyRequest, editor: ClientEditor): Promise<ClientPlan> {
    const body = adminBody(request, ['document', 'keep_unlisted']);
    // Required, not defaulted: left out, it would either delete every client the document omits or silently keep them.
    if (typeof body.keep_unlisted !== 'boolean') throw new ApiError(400, 'keep_unlisted is required: true keeps the clients the document leaves out, false deletes them (as clients:apply without --keep-unlisted)', { error: 'invalid_request' });
    try {
      return await this.declarations.plan(body.document, { editor, prune: !body.keep_unlisted, secrets: { kind: 'api' } });
    } catch (error) {
      if (!(error instanceof ClientDocumentError)) throw error;
      // Every problem in one answer, as the CLI prints them; 403 when one of them is the caller's rights rather than the document.
      throw error.forbidden ? new ApiError(403, error.message, { error: 'admin_client_protected' }) : new ApiError(400, error.message, { error: 'invalid_client_metadata' });
    }
  }
}
