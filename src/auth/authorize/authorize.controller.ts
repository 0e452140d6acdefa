import { Body, Controller, Get, Post, Req, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CookieForm, CrossSiteEntry } from '../../http/cookie-forms.js';
import { InteractionExceptionFilter } from '../errors/interaction-exception.filter.js';
import { sendOutcome } from '../interaction/interaction-responder.js';
import { AuthorizeService, type ConsentForm } from './authorize.service.js';

/** The authorization endpoint (RFC 6749 §3.1) and the consent form it shows. */
@Controller()
@UseFilters(InteractionExceptionFilter)
export class AuthorizeController {
  constructor(private readonly authorize: AuthorizeService) {}

  @Get('authorize')
  async start(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.authorize.start(request));
  }

  /** OpenID Connect Core §3.1.2.1: the authorization endpoint takes POST too (form-serialized), from the client's page; answered by a redirect to the GET. */
  @CrossSiteEntry('OpenID Connect Core 1.0 §3.1.2.1')
  @Post('authorize')
  startFromForm(@Body() form: unknown, @Res() reply: FastifyReply): void {
    sendOutcome(reply, this.authorize.fromForm(form));
  }

  @CookieForm()
  @Post('consent')
  async decide(@Req() request: FastifyRequest, @Body() form: ConsentForm, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.authorize.decide(request, form ?? {}));
  }
}
