import { Body, Controller, Get, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { InteractionExceptionFilter } from '../auth/errors/interaction-exception.filter.js';
import { sendOutcome } from '../auth/interaction/interaction-responder.js';
import { CookieForm } from '../http/cookie-forms.js';
import { AccountAccessForms } from './account-access-forms.js';
import { AccountForms } from './account-forms.js';
import type { AccountQuery } from './account-notices.js';
import { AccountPage } from './account-page.js';
import { ACCOUNT_ROUTES as ROUTES } from './account-routes.js';
import type { AccountForm } from './profile-form.js';

const path = (route: string): string => route.slice(1);

/**
 * The person's account page and its forms (issue 48). Pages and redirects only, never JSON: every
 * form posts with the session's CSRF token, and @CookieForm has the Fetch Metadata check refuse
 * other sites' posts before the route runs.
 */
@Controller()
@UseFilters(InteractionExceptionFilter)
export class AccountController {
  constructor(
    private readonly page: AccountPage,
    private readonly forms: AccountForms,
    private readonly access: AccountAccessForms,
  ) {}

  @Get(path(ROUTES.page))
  async show(@Req() request: FastifyRequest, @Query() query: AccountQuery, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.page.page(request, query));
  }

  @CookieForm()
  @Post(path(ROUTES.profile))
  async profile(@Req() request: FastifyRequest, @Body() form: AccountForm, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.forms.profile(request, form));
  }

  @CookieForm()
  @Post(path(ROUTES.password))
  async password(@Req() request: FastifyRequest, @Body() form: AccountForm, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.forms.password(request, form));
  }

  @CookieForm()
  @Post(path(ROUTES.endSession))
  async endSession(@Req() request: FastifyRequest, @Body() form: AccountForm, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.access.endSession(request, form));
  }

  @CookieForm()
  @Post(path(ROUTES.endOtherSessions))
  async endOtherSessions(@Req() request: FastifyRequest, @Body() form: AccountForm, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.access.endOtherSessions(request, form));
  }

  @Get(path(ROUTES.access))
  accessPage(@Query('withdrawn') withdrawn: unknown, @Res() reply: FastifyReply): void {
    sendOutcome(reply, this.access.accessPage(withdrawn));
  }

  @CookieForm()
  @Post(path(ROUTES.withdraw))
  async withdraw(@Req() request: FastifyRequest, @Body() form: AccountForm, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.access.withdraw(request, form));
  }
}
