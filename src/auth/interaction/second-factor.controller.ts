import { Body, Controller, Get, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CookieForm } from '../../http/cookie-forms.js';
import { InteractionExceptionFilter } from '../errors/interaction-exception.filter.js';
import { AccountFactorsService, type FactorForm } from './account-factors.service.js';
import { sendOutcome } from './interaction-responder.js';
import { SecondFactorService, type SecondFactorForm } from './second-factor.service.js';

/** The second step of a sign-in, and the account page's second factors. */
@Controller()
@UseFilters(InteractionExceptionFilter)
export class SecondFactorController {
  constructor(
    private readonly secondFactor: SecondFactorService,
    private readonly account: AccountFactorsService,
  ) {}

  @Get('login/code')
  async page(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.secondFactor.page(request));
  }

  @CookieForm()
  @Post('login/code')
  async submit(@Req() request: FastifyRequest, @Body() form: SecondFactorForm, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.secondFactor.submit(request, form ?? {}));
  }

  @Get('account/one-time-codes')
  async enrolment(@Req() request: FastifyRequest, @Query('return_to') returnTo: unknown, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.account.enrolmentPage(request, returnTo));
  }

  @CookieForm()
  @Post('account/one-time-codes')
  async confirm(@Req() request: FastifyRequest, @Body() form: FactorForm, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.account.confirm(request, form ?? {}));
  }

  @CookieForm()
  @Post('account/one-time-codes/remove')
  async remove(@Req() request: FastifyRequest, @Body() form: FactorForm, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.account.remove(request, form ?? {}));
  }

  @CookieForm()
  @Post('account/recovery-codes')
  async recoveryCodes(@Req() request: FastifyRequest, @Body() form: FactorForm, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.account.regenerateRecoveryCodes(request, form ?? {}));
  }
}
