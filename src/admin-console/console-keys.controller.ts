import { Body, Controller, Get, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendOutcome } from '../auth/interaction/interaction-responder.js';
import { CookieForm } from '../http/cookie-forms.js';
import { ConsoleEnabled } from './console-enabled.guard.js';
import { ConsoleExceptionFilter } from './console-exception.filter.js';
import { listPage } from './console-lists.js';
import { ConsolePages } from './console-pages.js';
import { CONSOLE } from './console-paths.js';
import { ConsoleSessions } from './console-sessions.js';

const KEYS = `${CONSOLE}/keys`;
const CONFIRM = `${KEYS}/confirm`;
const ROTATE = `${KEYS}/rotation`;

/**
 * The signing keys (issue 48): their states, for the auditor and the owner; a rotation of every
 * algorithm's key, the owner's, after a confirmation and with a recent sign-in.
 */
@Controller()
@UseFilters(ConsoleExceptionFilter)
@UseGuards(ConsoleEnabled)
export class ConsoleKeysController {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly pages: ConsolePages,
  ) {}

  @Get(KEYS.slice(1))
  async list(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Query('cursor') cursor?: unknown): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    const page = await listPage(visit.api, '/keys', KEYS, {}, cursor);
    sendOutcome(reply, await this.pages.page(visit, 'keys', 'Signing keys', { keys: page.items, next: page.next, canRotate: visit.can('system', 'write') }, { section: KEYS }));
  }

  @Get(CONFIRM.slice(1))
  async confirm(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    const data = {
      question: 'Make a new signing key for every algorithm?',
      consequence: 'Each new key is published now and signs tokens once relying parties have had time to fetch it; the old one stays published until the tokens it signed expire.',
      button: 'Rotate the keys',
      danger: true,
      action: ROTATE,
      cancel: KEYS,
      reauthenticate: !visit.recentlySignedIn,
    };
    sendOutcome(reply, await this.pages.page(visit, 'confirm', 'Rotate the signing keys', data, { section: KEYS }));
  }

  @CookieForm()
  @Post(ROTATE.slice(1))
  async rotate(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Body() form: Record<string, unknown> | undefined): Promise<void> {
    const visit = await this.sessions.submit(request, reply, form, CONFIRM);
    this.sessions.requireRecentSignIn(visit, CONFIRM);
    const rotated = await visit.api.send<{ items: { kid: string }[] }>('POST', '/keys/rotation');
    await visit.leave({ notice: `New keys published: ${rotated.items.map((key) => key.kid).join(', ')}.` });
    sendOutcome(reply, { kind: 'redirect', status: 303, location: KEYS });
  }
}
