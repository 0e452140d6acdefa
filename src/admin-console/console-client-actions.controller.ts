import { Body, Controller, Get, Param, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendOutcome } from '../auth/interaction/interaction-responder.js';
import { CookieForm } from '../http/cookie-forms.js';
import { ConsoleRefusal } from './console-errors.js';
import { ConsoleEnabled } from './console-enabled.guard.js';
import { ConsoleExceptionFilter } from './console-exception.filter.js';
import { ConsolePages } from './console-pages.js';
import { CONSOLE, segment } from './console-paths.js';
import { ConsoleSessions } from './console-sessions.js';

const CLIENTS = `${CONSOLE}/clients`;

/** The two things the console does to a client besides registering it, each after a confirmation page. */
const ACTIONS = {
  'rotate-secret': {
    title: 'Rotate the secret',
    question: (name: string) => `Give ${name} a new secret?`,
    consequence: 'The old secret stops working at once: the application fails to get tokens until it is configured with the new one, shown on the next page this once.',
    button: 'Rotate the secret',
    reauthenticate: false,
  },
  delete: {
    title: 'Delete the client',
    question: (name: string) => `Delete ${name}?`,
    consequence: 'Its codes, tokens and consents are deleted with it and its tokens stop working at once. This cannot be undone.',
    button: 'Delete for good',
    reauthenticate: true,
  },
} as const;

type ActionName = keyof typeof ACTIONS;

/**
 * Rotating a client's secret (shown once, as at registration) and deleting a client (issue 48),
 * each a POST with the session's CSRF token through the admin API, which decides whether this
 * administrator may (a client holding an admin scope, the console's own among them, is an owner's).
 * Deleting needs a recent sign-in.
 */
@Controller()
@UseFilters(ConsoleExceptionFilter)
@UseGuards(ConsoleEnabled)
export class ConsoleClientActionsController {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly pages: ConsolePages,
  ) {}

  @Get('admin/clients/:id/confirm/:action')
  async confirm(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Param('action') name: string): Promise<void> {
    const action = ACTIONS[actionName(name)];
    const visit = await this.sessions.visit(request, reply);
    const client = await visit.api.get(`/clients/${segment(id)}`);
    const page = `${CLIENTS}/${segment(id)}`;
    const data = { question: action.question(String(client.client_name)), consequence: action.consequence, button: action.button, danger: true, action: `${page}/${name}`, cancel: page, reauthenticate: action.reauthenticate && !visit.recentlySignedIn };
    sendOutcome(reply, await this.pages.page(visit, 'confirm', action.title, data, { section: CLIENTS }));
  }

  @CookieForm()
  @Post('admin/clients/:id/:action')
  async perform(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Param('action') name: string, @Body() form: Record<string, unknown> | undefined): Promise<void> {
    const which = actionName(name);
    const page = `${CLIENTS}/${segment(id)}`;
    const confirmation = `${page}/confirm/${which}`;
    const visit = await this.sessions.submit(request, reply, form, confirmation);
    if (ACTIONS[which].reauthenticate) this.sessions.requireRecentSignIn(visit, confirmation);
    if (which === 'rotate-secret') {
      const rotated = await visit.api.send('POST', `/clients/${segment(id)}/secret`);
      await visit.leave({ notice: `${String(rotated.client_name)} has a new secret.`, secret: { clientId: String(rotated.client_id), secret: String(rotated.client_secret) } });
      return void sendOutcome(reply, { kind: 'redirect', status: 303, location: page });
    }
    const client = await visit.api.get(`/clients/${segment(id)}`);
    await visit.api.send('DELETE', `/clients/${segment(id)}`);
    await visit.leave({ notice: `${String(client.client_name)} was deleted.` });
    sendOutcome(reply, { kind: 'redirect', status: 303, location: CLIENTS });
  }
}

function actionName(name: string): ActionName {
  if (!Object.hasOwn(ACTIONS, name)) throw new ConsoleRefusal(404, 'Not found', 'There is no such action.', { retryUrl: CLIENTS });
  return name as ActionName;
}
