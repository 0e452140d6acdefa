import { Body, Controller, Get, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { InteractionExceptionFilter } from '../auth/errors/interaction-exception.filter.js';
import { sendOutcome } from '../auth/interaction/interaction-responder.js';
import { CookieForm } from '../http/cookie-forms.js';
import { EmailAddressFlow } from './email-address.flow.js';
import { CsrfCheck } from './csrf-check.js';
import type { EmailForm } from './email-forms.js';
import { EMAIL_ROUTES as ROUTES } from './email-routes.js';
import { InvitationFlow } from './invitation.flow.js';
import { PasswordResetFlow } from './password-reset.flow.js';
import { RegistrationFlow } from './registration.flow.js';

const path = (route: string): string => route.slice(1);

/**
 * The pages the email links lead to (issue 46). A GET shows a form and changes nothing (mail
 * scanners open links); each form posts back with the session's CSRF token, and the Fetch Metadata
 * check refuses other sites' posts (@CookieForm).
 */
@Controller()
@UseFilters(InteractionExceptionFilter)
export class EmailLinksController {
  constructor(
    private readonly resets: PasswordResetFlow,
    private readonly invitations: InvitationFlow,
    private readonly addresses: EmailAddressFlow,
    private readonly registrations: RegistrationFlow,
    private readonly csrf: CsrfCheck,
  ) {}

  @Get(path(ROUTES.forgot))
  forgotPage(@Req() request: FastifyRequest, @Res() reply: FastifyReply): void {
    sendOutcome(reply, this.resets.forgotPage(request));
  }

  @CookieForm()
  @Post(path(ROUTES.forgot))
  async forgot(@Req() request: FastifyRequest, @Body() form: EmailForm, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.csrf.guard(request, form, ROUTES.forgot, () => this.resets.forgot(request, form)));
  }

  @Get(path(ROUTES.reset))
  async resetPage(@Req() request: FastifyRequest, @Query('token') token: unknown, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.resets.resetPage(request, token));
  }

  @CookieForm()
  @Post(path(ROUTES.reset))
  async reset(@Req() request: FastifyRequest, @Body() form: EmailForm, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.csrf.guard(request, form, ROUTES.forgot, () => this.resets.reset(request, form)));
  }

  @Get(path(ROUTES.invitation))
  async invitationPage(@Req() request: FastifyRequest, @Query('token') token: unknown, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.invitations.page(request, token));
  }

  @CookieForm()
  @Post(path(ROUTES.invitation))
  async acceptInvitation(@Req() request: FastifyRequest, @Body() form: EmailForm, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.csrf.guard(request, form, '/login', () => this.invitations.accept(request, form)));
  }

  @Get(path(ROUTES.verify))
  async verifyPage(@Req() request: FastifyRequest, @Query('token') token: unknown, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.addresses.confirmPage(request, 'verify', token));
  }

  @CookieForm()
  @Post(path(ROUTES.verify))
  async verify(@Req() request: FastifyRequest, @Body() form: EmailForm, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.csrf.guard(request, form, '/', () => this.addresses.confirm('verify', form)));
  }

  @Get(path(ROUTES.account))
  async accountPage(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.addresses.accountPage(request));
  }

  @CookieForm()
  @Post(path(ROUTES.account))
  async changeAddress(@Req() request: FastifyRequest, @Body() form: EmailForm, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.csrf.guard(request, form, ROUTES.account, () => this.addresses.change(request, form)));
  }

  @Get(path(ROUTES.confirmChange))
  async confirmChangePage(@Req() request: FastifyRequest, @Query('token') token: unknown, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.addresses.confirmPage(request, 'change', token));
  }

  @CookieForm()
  @Post(path(ROUTES.confirmChange))
  async confirmChange(@Req() request: FastifyRequest, @Body() form: EmailForm, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.csrf.guard(request, form, '/', () => this.addresses.confirm('change', form)));
  }

  @Get(path(ROUTES.register))
  registerPage(@Req() request: FastifyRequest, @Res() reply: FastifyReply): void {
    sendOutcome(reply, this.registrations.page(request));
  }

  @CookieForm()
  @Post(path(ROUTES.register))
  async register(@Req() request: FastifyRequest, @Body() form: EmailForm, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.csrf.guard(request, form, ROUTES.register, () => this.registrations.register(request, form)));
  }

  @Get(path(ROUTES.registerConfirm))
  async registerConfirmPage(@Req() request: FastifyRequest, @Query('token') token: unknown, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.registrations.confirmPage(request, token));
  }

  @CookieForm()
  @Post(path(ROUTES.registerConfirm))
  async confirmRegistration(@Req() request: FastifyRequest, @Body() form: EmailForm, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.csrf.guard(request, form, '/login', () => this.registrations.confirm(form)));
  }
}
