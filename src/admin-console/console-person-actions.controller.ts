import { Body, Controller, Get, Param, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendOutcome } from '../auth/interaction/interaction-responder.js';
import { CookieForm } from '../http/cookie-forms.js';
import type { ConsoleApi } from './console-api.js';
import { ConsoleRefusal } from './console-errors.js';
import { ConsoleEnabled } from './console-enabled.guard.js';
import { ConsoleExceptionFilter } from './console-exception.filter.js';
import { ConsolePages } from './console-pages.js';
import { CONSOLE, segment } from './console-paths.js';
import { ConsoleSessions } from './console-sessions.js';

type Answer = Record<string, unknown>;

/** What the console does to a person, each through its admin API route, after a confirmation page. */
interface PersonAction {
  title: string;
  question: (name: string) => string;
  consequence: string;
  button: string;
  danger: boolean;
  /** Needs a sign-in within ADMIN_CONSOLE_REAUTH_SECONDS (a new one is asked for otherwise). */
  reauthenticate: boolean;
  perform: (api: ConsoleApi, path: string) => Promise<Answer>;
  notice: (name: string, answer: Answer) => string;
  /** Back to the person, or to the list when they are gone. */
  toList?: boolean;
}

const plural = (count: unknown, one: string): string => `${Number(count)} ${one}${Number(count) === 1 ? '' : 's'}`;

const ACTIONS: Readonly<Record<string, PersonAction>> = {
  'reset-factors': {
    title: 'Reset second factors',
    question: (name) => `Remove every second factor of ${name}: one-time codes, recovery codes and passkeys?`,
    consequence: 'They sign in with their password alone until they set up a factor again (at once, if one is required of them). Do this only once you are sure who is asking.',
    button: 'Reset second factors',
    danger: true,
    reauthenticate: false,
    perform: (api, path) => api.send('DELETE', `${path}/factors`),
    notice: (name, a) => `Second factors of ${name} removed: one-time codes ${a.one_time_codes_removed ? 'turned off' : 'were off'}, ${plural(a.recovery_codes_removed, 'recovery code')}, ${plural(a.passkeys_removed, 'passkey')}.`,
  },
  'end-sessions': {
    title: 'End all sessions',
    question: (name) => `Sign ${name} out everywhere?`,
    consequence: 'Every browser they are signed in on is signed out, and applications registered for back-channel logout are told.',
    button: 'End all sessions',
    danger: true,
    reauthenticate: false,
    perform: (api, path) => api.send('DELETE', `${path}/sessions`),
    notice: (name, a) => `${plural(a.sessions_ended, 'session')} of ${name} ended.`,
  },
  lock: {
    title: 'Lock the account',
    question: (name) => `Lock ${name}'s account?`,
    consequence: 'Their sessions end, every token issued to them is revoked, and they cannot sign in until the account is unlocked.',
    button: 'Lock',
    danger: true,
    reauthenticate: false,
    perform: (api, path) => api.send('PUT', `${path}/lock`),
    notice: (name, a) => `${name} is locked: ${plural(a.sessions_ended, 'session')} ended, ${plural(a.tokens_revoked, 'token')} revoked.`,
  },
  delete: {
    title: 'Delete the person',
    question: (name) => `Delete ${name} and everything that is theirs?`,
    consequence: 'Their sessions end first; then their account, factors, consents and tokens are deleted. This cannot be undone.',
    button: 'Delete for good',
    danger: true,
    reauthenticate: true,
    perform: (api, path) => api.send('DELETE', path),
    notice: (name) => `${name} was deleted.`,
    toList: true,
  },
};

/**
 * What the console does to a person (issue 48): reset their factors, end their sessions (all, or
 * one), lock, unlock, delete, each after a confirmation page (unlocking excepted), each a POST with
 * the session's CSRF token through the admin API, which decides whether this administrator may.
 * Deleting needs a recent sign-in.
 */
@Controller()
@UseFilters(ConsoleExceptionFilter)
@UseGuards(ConsoleEnabled)
export class ConsolePersonActionsController {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly pages: ConsolePages,
  ) {}

  @Get('admin/people/:id/confirm/:action')
  async confirm(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Param('action') name: string): Promise<void> {
    const action = actionNamed(name);
    const visit = await this.sessions.visit(request, reply);
    const person = await visit.api.get(`/people/${segment(id)}`);
    const page = personPage(id);
    sendOutcome(
      reply,
      await this.pages.page(
        visit,
        'confirm',
        action.title,
        { question: action.question(String(person.username)), consequence: action.consequence, button: action.button, danger: action.danger, action: `${page}/${name}`, cancel: page, reauthenticate: action.reauthenticate && !visit.recentlySignedIn },
        { section: `${CONSOLE}/people` },
      ),
    );
  }

  @CookieForm()
  @Post('admin/people/:id/:action')
  async perform(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Param('action') name: string, @Body() form: Record<string, unknown> | undefined): Promise<void> {
    const page = personPage(id);
    if (name === 'unlock') {
      const visit = await this.sessions.submit(request, reply, form, page);
      const person = await visit.api.get(`/people/${segment(id)}`);
      await visit.api.send('DELETE', `/people/${segment(id)}/lock`);
      await visit.leave({ notice: `${String(person.username)} is unlocked.` });
      return void sendOutcome(reply, { kind: 'redirect', status: 303, location: page });
    }
    const action = actionNamed(name);
    const confirmation = `${page}/confirm/${name}`;
    const visit = await this.sessions.submit(request, reply, form, confirmation);
    if (action.reauthenticate) this.sessions.requireRecentSignIn(visit, confirmation);
    const person = await visit.api.get(`/people/${segment(id)}`);
    const answer = await action.perform(visit.api, `/people/${segment(id)}`);
    await visit.leave({ notice: action.notice(String(person.username), answer) });
    sendOutcome(reply, { kind: 'redirect', status: 303, location: action.toList ? `${CONSOLE}/people` : page });
  }

  @Get('admin/people/:id/sessions/:sessionId/end')
  async confirmEndSession(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Param('sessionId') sessionId: string): Promise<void> {
    const visit = await this.sessions.visit(request, reply);
    const person = await visit.api.get(`/people/${segment(id)}`);
    const page = personPage(id);
    const data = {
      question: `End this session of ${String(person.username)}?`,
      consequence: 'That browser is signed out, and applications registered for back-channel logout are told. Their other sessions go on.',
      button: 'End the session',
      danger: true,
      action: `${page}/sessions/${segment(sessionId)}/end`,
      cancel: page,
      reauthenticate: false,
    };
    sendOutcome(reply, await this.pages.page(visit, 'confirm', 'End a session', data, { section: `${CONSOLE}/people` }));
  }

  @CookieForm()
  @Post('admin/people/:id/sessions/:sessionId/end')
  async endSession(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Param('sessionId') sessionId: string, @Body() form: Record<string, unknown> | undefined): Promise<void> {
    const page = personPage(id);
    const visit = await this.sessions.submit(request, reply, form, `${page}/sessions/${segment(sessionId)}/end`);
    await visit.api.send('DELETE', `/people/${segment(id)}/sessions/${segment(sessionId)}`);
    await visit.leave({ notice: 'The session ended.' });
    sendOutcome(reply, { kind: 'redirect', status: 303, location: page });
  }
}

function personPage(id: string): string {
  return `${CONSOLE}/people/${segment(id)}`;
}

function actionNamed(name: string): PersonAction {
  const action = Object.hasOwn(ACTIONS, name) ? ACTIONS[name] : undefined;
  if (action === undefined) throw new ConsoleRefusal(404, 'Not found', 'There is no such action.', { retryUrl: `${CONSOLE}/people` });
  return action;
}
