import { Body, Controller, Get, Header, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sendOutcome } from '../auth/interaction/interaction-responder.js';
import { PROJECT_ROOT } from '../common/project-root.js';
import { CookieForm } from '../http/cookie-forms.js';
import { CALLBACK_PATH, SIGNED_OUT_PATH } from './console-client.js';
import { ConsoleEnabled } from './console-enabled.guard.js';
import { ConsoleExceptionFilter } from './console-exception.filter.js';
import { ConsolePages } from './console-pages.js';
import { CONSOLE, consolePage, SIGN_IN_PATH, SIGN_OUT_PATH } from './console-paths.js';
import { ConsoleSessions } from './console-sessions.js';

/** Read once at start-up: the console's stylesheet and its one script. */
const STYLESHEET = readFileSync(join(PROJECT_ROOT, 'public', 'admin-console.css'), 'utf8');
const SCRIPT = readFileSync(join(PROJECT_ROOT, 'public', 'admin-console.js'), 'utf8');

/**
 * Signing in to the console and out of it (issue 48): the console is an OpenID Connect client of
 * this server (ConsoleOpenId), so an administrator signs in as anyone does, with the second factor
 * or passkey ADMIN_CONSOLE_ACR asks for; sign-out revokes the console's tokens and signs out of the
 * server too (RP-Initiated Logout).
 */
@Controller()
@UseFilters(ConsoleExceptionFilter)
@UseGuards(ConsoleEnabled)
export class ConsoleSignInController {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly pages: ConsolePages,
  ) {}

  /** Sends the browser to the authorization endpoint; `reauthenticate=1` asks for a new sign-in (a dangerous action). */
  @Get(SIGN_IN_PATH.slice(1))
  async signIn(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Query('return_to') returnTo?: unknown, @Query('reauthenticate') reauthenticate?: unknown): Promise<void> {
    const location = await this.sessions.startSignIn(request, reply, consolePage(returnTo) ?? CONSOLE, reauthenticate === '1');
    sendOutcome(reply, { kind: 'redirect', status: 303, location });
  }

  /** The authorization response (the redirect URI the console's client registered). */
  @Get(CALLBACK_PATH.slice(1))
  async callback(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, { kind: 'redirect', status: 303, location: await this.sessions.finishSignIn(request, reply) });
  }

  @CookieForm()
  @Post(SIGN_OUT_PATH.slice(1))
  async signOut(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Body() form: Record<string, unknown> | undefined): Promise<void> {
    sendOutcome(reply, { kind: 'redirect', status: 303, location: await this.sessions.signOut(request, reply, form) });
  }

  @Get(SIGNED_OUT_PATH.slice(1))
  signedOut(@Res() reply: FastifyReply): void {
    sendOutcome(reply, this.pages.plain('signed-out', 'Signed out', {}));
  }

  @Get('admin/assets/console.css')
  @Header('Content-Type', 'text/css; charset=utf-8')
  @Header('Cache-Control', 'public, max-age=3600')
  stylesheet(): string {
    return STYLESHEET;
  }

  @Get('admin/assets/console.js')
  @Header('Content-Type', 'text/javascript; charset=utf-8')
  @Header('Cache-Control', 'public, max-age=3600')
  script(): string {
    return SCRIPT;
  }
}
