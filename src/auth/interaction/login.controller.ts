import { Body, Controller, Get, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CookieForm } from '../../http/cookie-forms.js';
import { InteractionExceptionFilter } from '../errors/interaction-exception.filter.js';
import { sendOutcome } from './interaction-responder.js';
import { LoginService, type LoginForm } from './login.service.js';

/** Login and logout of the person at the authorization server. */
@Controller()
@UseFilters(InteractionExceptionFilter)
export class LoginController {
  constructor(private readonly login: LoginService) {}

  @Get('login')
  async page(@Req() request: FastifyRequest, @Query() query: { return_to?: unknown }, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.login.page(request, query ?? {}));
  }

  @CookieForm()
  @Post('login')
  async submit(@Req() request: FastifyRequest, @Body() form: LoginForm, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.login.submit(request, form ?? {}));
  }

  @CookieForm()
  @Post('logout')
  async logOut(@Req() request: FastifyRequest, @Body() form: LoginForm, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.login.logOut(request, form ?? {}));
  }
}
