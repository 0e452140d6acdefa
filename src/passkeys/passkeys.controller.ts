import { Body, Controller, Get, Header, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { InteractionExceptionFilter } from '../auth/errors/interaction-exception.filter.js';
import { sendOutcome } from '../auth/interaction/interaction-responder.js';
import { PROJECT_ROOT } from '../common/project-root.js';
import { CookieForm } from '../http/cookie-forms.js';
import { PasskeyAccount } from './passkey-account.service.js';
import { PasskeyLogin } from './passkey-login.service.js';
import { PASSKEY_ROUTES, type JsonOutcome } from './passkey-routes.js';

/** Read once at start-up: @simplewebauthn/browser's own bundle (it defines SimpleWebAuthnBrowser) and our script, served from our origin. */
// The package's exports name no file of its bundle: found from its CommonJS entry point (script/index.js).
const BROWSER_PACKAGE = dirname(dirname(createRequire(import.meta.url).resolve('@simplewebauthn/browser')));
const BROWSER_LIBRARY = readFileSync(join(BROWSER_PACKAGE, 'dist', 'bundle', 'index.umd.min.js'), 'utf8');
const SCRIPT = readFileSync(join(PROJECT_ROOT, 'public', 'passkeys.js'), 'utf8');

function sendJson(reply: FastifyReply, outcome: JsonOutcome): void {
  // Options carry challenges, answers carry where a session goes: never cached.
  reply.code(outcome.status).header('Cache-Control', 'no-store').headers(outcome.headers ?? {}).send(outcome.body);
}

@Controller()
@UseFilters(InteractionExceptionFilter)
export class PasskeysController {
  constructor(
    private readonly account: PasskeyAccount,
    private readonly login: PasskeyLogin,
  ) {}

  @Get(PASSKEY_ROUTES.account.slice(1))
  async page(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Query('done') done?: unknown): Promise<void> {
    sendOutcome(reply, await this.account.page(request, done));
  }

  @CookieForm()
  @Post(PASSKEY_ROUTES.remove.slice(1))
  async remove(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Body() form: Record<string, unknown> | undefined): Promise<void> {
    sendOutcome(reply, await this.account.remove(request, form));
  }

  @CookieForm()
  @Post(PASSKEY_ROUTES.registrationOptions.slice(1))
  async registrationOptions(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    sendJson(reply, await this.account.registrationOptions(request));
  }

  @CookieForm()
  @Post(PASSKEY_ROUTES.registration.slice(1))
  async register(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    sendJson(reply, await this.account.register(request));
  }

  @CookieForm()
  @Post(PASSKEY_ROUTES.signInOptions.slice(1))
  async signInOptions(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    sendJson(reply, await this.login.options(request));
  }

  @CookieForm()
  @Post(PASSKEY_ROUTES.signIn.slice(1))
  async signIn(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    sendJson(reply, await this.login.submit(request));
  }

  @Get(PASSKEY_ROUTES.browserLibrary.slice(1))
  @Header('Content-Type', 'text/javascript; charset=utf-8')
  @Header('Cache-Control', 'public, max-age=3600')
  browserLibrary(): string {
    return BROWSER_LIBRARY;
  }

  @Get(PASSKEY_ROUTES.script.slice(1))
  @Header('Content-Type', 'text/javascript; charset=utf-8')
  @Header('Cache-Control', 'public, max-age=3600')
  script(): string {
    return SCRIPT;
  }
}
