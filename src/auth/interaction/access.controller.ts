import { Body, Controller, Get, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CookieForm } from '../../http/cookie-forms.js';
import { ClientsService } from '../../clients/clients.service.js';
import { AccessWithdrawalService } from '../../consents/access-withdrawal.service.js';
import { InteractionExceptionFilter } from '../errors/interaction-exception.filter.js';
import { sendOutcome, type InteractionOutcome } from './interaction-responder.js';
import { LoginSession } from './login-session.js';
import { Pages } from './pages.js';

export const ACCESS_PAGE = '/account/access';
export const WITHDRAW_ACTION = '/account/access/withdraw';

/** The page where a signed-in person sees which applications hold access to their data, and withdraws it. */
@Controller()
@UseFilters(InteractionExceptionFilter)
export class AccessController {
  constructor(
    private readonly session: LoginSession,
    private readonly pages: Pages,
    private readonly access: AccessWithdrawalService,
    private readonly clients: ClientsService,
  ) {}

  @Get(ACCESS_PAGE.slice(1))
  async page(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Query('withdrawn') withdrawn?: unknown): Promise<void> {
    sendOutcome(reply, await this.render(request, typeof withdrawn === 'string' ? withdrawn : undefined));
  }

  @CookieForm()
  @Post(WITHDRAW_ACTION.slice(1))
  async withdraw(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Body() form: Record<string, unknown> | undefined): Promise<void> {
    const user = await this.session.currentUser(request);
    if (!user) return void sendOutcome(reply, await this.pages.login(request, { returnTo: ACCESS_PAGE }));
    if (!this.session.csrfMatches(request, form?.csrf_token)) {
      return void sendOutcome(reply, this.pages.error(403, 'invalid_request', 'This form has expired or was not sent from this site. Please try again.', { retryUrl: ACCESS_PAGE }));
    }
    const clientId = typeof form?.client_id === 'string' ? form.client_id : '';
    const granted = (await this.access.list(user.id)).find((g) => g.clientId === clientId);
    if (!granted) return void sendOutcome(reply, this.pages.error(404, 'not_found', 'That application has no access to withdraw.', { retryUrl: ACCESS_PAGE }));
    await this.access.withdraw(user.id, clientId);
    sendOutcome(reply, { kind: 'redirect', status: 303, location: `${ACCESS_PAGE}?withdrawn=${encodeURIComponent(clientId)}` });
  }

  private async render(request: FastifyRequest, withdrawn: string | undefined): Promise<InteractionOutcome> {
    const user = await this.session.currentUser(request);
    if (!user) return this.pages.login(request, { returnTo: ACCESS_PAGE });
    // The confirmation names a registered client looked up by id, never text taken from the URL.
    const withdrawnClient = withdrawn && withdrawn.length <= 64 ? await this.clients.findById(withdrawn) : null;
    return this.pages.access(request, user, await this.access.list(user.id), withdrawnClient?.name);
  }
}
