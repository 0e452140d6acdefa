import { Body, Controller, Get, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { InteractionExceptionFilter } from '../auth/errors/interaction-exception.filter.js';
import { sendOutcome } from '../auth/interaction/interaction-responder.js';
import { CookieForm } from '../http/cookie-forms.js';
import { DEVICE_ROUTES } from './device-pages.js';
import { DeviceVerification, type DeviceForm } from './device-verification.service.js';

/** The verification page of the device authorization grant (RFC 8628 §3.3): verification_uri and verification_uri_complete. */
@Controller()
@UseFilters(InteractionExceptionFilter)
export class DeviceVerificationController {
  constructor(private readonly verification: DeviceVerification) {}

  @Get(DEVICE_ROUTES.page.slice(1))
  async page(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Query('user_code') userCode?: unknown): Promise<void> {
    sendOutcome(reply, await this.verification.page(request, userCode));
  }

  @CookieForm()
  @Post(DEVICE_ROUTES.page.slice(1))
  async submitCode(@Req() request: FastifyRequest, @Body() form: DeviceForm | undefined, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.verification.submitCode(request, form ?? {}));
  }

  @CookieForm()
  @Post(DEVICE_ROUTES.decision.slice(1))
  async decide(@Req() request: FastifyRequest, @Body() form: DeviceForm | undefined, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.verification.decide(request, form ?? {}));
  }
}
