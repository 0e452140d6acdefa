import { Controller, Get, Header, Req, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../common/project-root.js';
import { InteractionExceptionFilter } from '../errors/interaction-exception.filter.js';
import { sendOutcome } from './interaction-responder.js';
import { LoginSession } from './login-session.js';
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

  /** Who is signed in here, with a sign-out button. */
  @Get()
  async home(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, this.pages.home(request, await this.session.currentUser(request)));
  }

  @Get('assets/latchkey.css')
  @Header('Content-Type', 'text/css; charset=utf-8')
  @Header('Cache-Control', 'public, max-age=3600')
  stylesheet(): string {
    return STYLESHEET;
  }
}
