import { Body, Controller, Get, Param, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { InteractionExceptionFilter } from '../auth/errors/interaction-exception.filter.js';
import { sendOutcome } from '../auth/interaction/interaction-responder.js';
import { CookieForm } from '../http/cookie-forms.js';
import { UpstreamSignIn, type StartQuery } from './upstream-sign-in.service.js';
import { UpstreamSignOut } from './upstream-sign-out.js';

/** Sign-in through an upstream identity provider: off to it, and back from it (OpenID Connect; SAML has its own controller). */
@Controller('federation')
@UseFilters(InteractionExceptionFilter)
export class FederationController {
  constructor(
    private readonly signIn: UpstreamSignIn,
    private readonly signOut: UpstreamSignOut,
  ) {}

  @Get(':idp/start')
  async start(@Req() request: FastifyRequest, @Param('idp') idp: string, @Query() query: StartQuery, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.signIn.start(request, idp, query ?? {}));
  }

  @CookieForm()
  @Post(':idp/link')
  async link(@Req() request: FastifyRequest, @Param('idp') idp: string, @Body() form: { csrf_token?: unknown }, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.signIn.startLink(request, idp, form ?? {}));
  }

  /** The post_logout_redirect_uri registered at OpenID Connect providers: back from their logout. */
  @Get(':idp/signed-out')
  signedOut(@Req() request: FastifyRequest, @Param('idp') idp: string, @Query() query: { state?: unknown }, @Res() reply: FastifyReply): void {
    sendOutcome(reply, this.signOut.returned(request, idp, query ?? {}));
  }

  /** The redirect URI registered at OpenID Connect providers: a top-level GET, so the SameSite=Lax session cookie comes with it. */
  @Get(':idp/callback')
  async callback(@Req() request: FastifyRequest, @Param('idp') idp: string, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.signIn.openIdCallback(request, idp));
  }
}
