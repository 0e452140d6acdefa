import { Controller, Get, Header, Req, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../common/project-root.js';
import { InteractionExceptionFilter } from '../errors/interaction-exception.filter.js';
import { sendOutcome } from './interaction-responder.js';
import { LoginSession } from './login-session.js';
import { ACCOUNT_PAGE } from './login.service.js';
import { Pages } from './pages.js';

/** Read once at start-up: the pages' only stylesheet. */
const STYLESHEET = readFileSync(join(PROJECT_ROOT, 'public', 'latchkey.css'), 'utf8');

@Controller()
@UseFilters(InteractionExceptionFilter)
export class HomeController {
  constructor(
    private readonly session: LoginSession,
    private readonly pages: Pages,
  ) {}

  /** A signed-in person goes to their account page (issue 48, 303: a GET there); anyone else sees what this server is, and a way to sign in. */
  @Get()
  async home(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const user = await this.session.currentUser(request);
    sendOutcome(reply, user ? { kind: 'redirect', status: 303, location: ACCOUNT_PAGE } : this.pages.home());
  }

  @Get('assets/latchkey.css')
  @Header('Content-Type', 'text/css; charset=utf-8')
  @Header('Cache-Control', 'public, max-age=3600')
  stylesheet(): string {
    return STYLESHEET;
  }
}
