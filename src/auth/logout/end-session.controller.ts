import { Body, Controller, Get, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CookieForm, CrossSiteEntry } from '../../http/cookie-forms.js';
import { InteractionExceptionFilter } from '../errors/interaction-exception.filter.js';
import { sendOutcome } from '../interaction/interaction-responder.js';
import { EndSessionService, type EndSessionParams } from './end-session.service.js';

/** OpenID Connect RP-Initiated Logout 1.0 §2: the end_session_endpoint, GET and POST, and its confirmation. */
@Controller('session/end')
@UseFilters(InteractionExceptionFilter)
export class EndSessionController {
  constructor(private readonly endSession: EndSessionService) {}

  @Get()
  async get(@Req() request: FastifyRequest, @Query() query: EndSessionParams, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.endSession.start(request, query ?? {}));
  }

  // A client's page may send the person here with a form POST (§2): it does what the GET does.
  @CrossSiteEntry('OpenID Connect RP-Initiated Logout 1.0 §2')
  @Post()
  async post(@Req() request: FastifyRequest, @Body() form: EndSessionParams, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.endSession.start(request, form ?? {}));
  }

  @CookieForm()
  @Post('confirm')
  async confirm(@Req() request: FastifyRequest, @Body() form: EndSessionParams, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.endSession.confirm(request, form ?? {}));
  }
}
