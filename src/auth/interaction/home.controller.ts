import { Body, Controller, Get, Header, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CookieForm } from '../../http/cookie-forms.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../common/project-root.js';
import { InteractionExceptionFilter } from '../errors/interaction-exception.filter.js';
import { sendOutcome } from './interaction-responder.js';
import { LoginSession } from './login-session.js';
import { Pages } from './pages.js';
import { SecondFactors } from '../../factors/second-factors.service.js';
import { SignInMethods } from '../../identity-providers/sign-in-methods.js';
import { UpstreamAccounts } from '../../identity-providers/upstream-accounts.service.js';

/** Read once at start-up: the pages' only stylesheet. */
const STYLESHEET = readFileSync(join(PROJECT_ROOT, 'public', 'latchkey.css'), 'utf8');

export const END_OTHER_SESSIONS_ACTION = '/account/sessions/end-others';

@Controller()
@UseFilters(InteractionExceptionFilter)
export class HomeController {
  constructor(
    private readonly session: LoginSession,
    private readonly pages: Pages,
    private readonly factors: SecondFactors,
    private readonly signInMethods: SignInMethods,
    private readonly upstreamAccounts: UpstreamAccounts,
  ) {}

  /** Who is signed in here, on how many other browsers, with sign-out buttons for this one and the others. */
  @Get()
  async home(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Query('ended') ended?: unknown): Promise<void> {
    const user = await this.session.currentUser(request);
    const others = user ? await this.session.otherSessionCount(user) : 0;
    const endedCount = typeof ended === 'string' && /^\d{1,6}$/.test(ended) ? Number(ended) : undefined;
    const factors = user ? await this.factors.summary(user.id) : undefined;
    // Issue 45: the organizations' accounts this person signs in with, and the others they may link.
    const upstream = user ? await this.upstreamChoices(user.id) : [];
    sendOutcome(reply, await this.pages.home(request, user, { others, ended: endedCount }, factors, upstream));
  }

 /** The enabled upstream identity providers, each linked to this person or not. */
  private async upstreamChoices(userId: string): Promise<{ id: string; name: string; linked: boolean }[]> {
    const [{ upstream }, links] = await Promise.all([this.signInMethods.forClient(undefined), this.upstreamAccounts.linksOf(userId)]);
    return upstream.map((provider) => ({ id: provider.id, name: provider.displayName, linked: links.some((link) => link.idp === provider.id) }));
  }

  /** "Sign out everywhere else" (OWASP ASVS 3.3.4): ends every other session of the signed-in person, on every instance. */
  @CookieForm()
  @Post(END_OTHER_SESSIONS_ACTION.slice(1))
  async endOtherSessions(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Body() form: Record<string, unknown> | undefined): Promise<void> {
    const user = await this.session.currentUser(request);
    if (!user) return void sendOutcome(reply, await this.pages.login(request, { returnTo: '/' }));
    if (!this.session.csrfMatches(request, form?.csrf_token)) {
      return void sendOutcome(reply, this.pages.error(403, 'invalid_request', 'This form has expired or was not sent from this site. Please try again.', { retryUrl: '/' }));
    }
    const ended = await this.session.endOtherSessions(request, user);
    sendOutcome(reply, { kind: 'redirect', status: 303, location: `/?ended=${ended}` });
  }

  @Get('assets/latchkey.css')
  @Header('Content-Type', 'text/css; charset=utf-8')
  @Header('Cache-Control', 'public, max-age=3600')
  stylesheet(): string {
    return STYLESHEET;
  }
}
