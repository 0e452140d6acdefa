import { Controller, Get, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../http/api-error.js';
import { isSigningAlgorithm, SIGNING_ALGORITHMS } from '../../signing/signing-algorithms.js';
import { SigningKeyVault, type SigningKeyView } from '../../signing/signing-key-vault.js';
import { adminCaller, AdminRoute } from '../admin-access.js';
import { parseAdminPage, sendAdminPage } from '../admin-paging.js';
import { ADMIN_API, sendAdminJson } from '../admin-reply.js';
import { adminBody, adminQuery, invalidCursor } from './admin-input.js';

/**
 * The keys that sign ID tokens (issue 48): their states, as `keys:list` prints them (never a
 * private half), read by the auditor and the owner; a rotation, as `keys:rotate` makes it, by an
 * owner only, audited (`signing_key.rotated`) with the caller and their address.
 */
@Controller(ADMIN_API)
export class SigningKeysController {
  constructor(private readonly vault: SigningKeyVault) {}

  /** A few keys per algorithm (retired ones are purged), paged like every list: by algorithm, then generation. */
  @Get('keys')
  @AdminRoute('system', 'read')
  async list(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const page = parseAdminPage(adminQuery(request, ['limit', 'cursor']));
    const keys = (await this.vault.list()).sort((a, b) => (a.alg === b.alg ? a.generation - b.generation : a.alg < b.alg ? -1 : 1));
    const after = page.after && { alg: page.after.value, generation: Number(page.after.id) };
    if (after && !Number.isSafeInteger(after.generation)) throw invalidCursor();
    const rest = after ? keys.filter((key) => key.alg > after.alg || (key.alg === after.alg && key.generation > after.generation)) : keys;
    sendAdminPage(request, reply, rest.slice(0, page.limit + 1), page, (key: SigningKeyView) => key, (key) => ({ value: key.alg, id: String(key.generation) }));
  }

  /**
   * `{"alg": "ES256"}` rotates that algorithm's key; no body (or `{}`) rotates every algorithm's.
   * Each new key is published now and signs one SIGNING_KEY_PUBLISH_LEAD_SECONDS later.
   */
  @Post('keys/rotation')
  @AdminRoute('system', 'write')
  async rotate(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const body = request.body === undefined || request.body === null ? {} : adminBody(request, ['alg']);
    if (body.alg !== undefined && !isSigningAlgorithm(body.alg)) {
      throw new ApiError(400, `alg must be one of ${SIGNING_ALGORITHMS.join(', ')}`, { error: 'invalid_request' });
    }
    const rotated = await this.vault.rotateEach(body.alg === undefined ? SIGNING_ALGORITHMS : [body.alg], adminCaller(request));
    sendAdminJson(reply, { items: rotated }, 201);
  }
}
