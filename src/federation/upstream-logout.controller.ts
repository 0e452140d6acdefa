import { Body, Controller, Param, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { UpstreamBackchannelLogout } from './oidc/upstream-backchannel-logout.js';

/**
 * Where an upstream OpenID Connect provider posts its back-channel logout tokens (register
 * `${ISSUER}/federation/<idp>/backchannel-logout` there). Server to server: no cookie, no page.
 */
@Controller('federation')
export class UpstreamLogoutController {
  constructor(private readonly logout: UpstreamBackchannelLogout) {}

  /** Back-Channel Logout 1.0 §2.8: 200 when the token was accepted, 400 with an error otherwise; never cached. */
  @Post(':idp/backchannel-logout')
  async backchannelLogout(@Param('idp') idp: string, @Body() form: { logout_token?: unknown } | undefined, @Res() reply: FastifyReply): Promise<void> {
    const answer = await this.logout.receive(idp, form?.logout_token);
    reply.header('Cache-Control', 'no-store');
    if (answer.status === 200) return void reply.code(200).send();
    return void reply.code(400).send({ error: answer.error, error_description: answer.description });
  }
}
