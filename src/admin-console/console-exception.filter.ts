import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendOutcome } from '../auth/interaction/interaction-responder.js';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '../database/database-unavailable.js';
import { AdminApiRefusal, ConsoleRefusal, ReauthenticationRequired, SignInRequired } from './console-errors.js';
import { ConsolePages } from './console-pages.js';
import { CONSOLE, consolePage, signInPath } from './console-paths.js';

/** A page title for an admin API refusal, by its status. */
function titleFor(status: number): string {
  if (status === 403) return 'Not allowed';
  if (status === 404) return 'Not found';
  if (status === 409) return 'Cannot be done now';
  return 'Request refused';
}

/**
 * The console's errors (its own transport, as STYLE.md asks: a filter per transport): a missing or
 * stale sign-in becomes a redirect to sign in (again), a refusal a page with its status and the
 * admin API's own description, anything unexpected a 500 page with nothing leaked.
 */
@Catch()
export class ConsoleExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger(ConsoleExceptionFilter.name);

  constructor(private readonly pages: ConsolePages) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    if (exception instanceof SignInRequired) return void sendOutcome(reply, { kind: 'redirect', status: 303, location: signInPath(exception.returnTo) });
    if (exception instanceof ReauthenticationRequired) return void sendOutcome(reply, { kind: 'redirect', status: 303, location: signInPath(exception.returnTo, true) });
    if (exception instanceof ConsoleRefusal) return void sendOutcome(reply, this.pages.error(exception.status, exception.title, exception.message, exception.options.retryUrl));
    if (exception instanceof AdminApiRefusal) return void sendOutcome(reply, this.pages.error(exception.status, titleFor(exception.status), exception.message, CONSOLE));
    if (exception instanceof HttpException && exception.getStatus() < 500) {
      return void sendOutcome(reply, this.pages.error(exception.getStatus(), titleFor(exception.getStatus()), exception.message, CONSOLE));
    }
    if (isDatabaseUnavailable(exception)) {
      void reply.header('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS));
      return void sendOutcome(reply, this.pages.error(503, 'Temporarily unavailable', 'The database is not answering. Try again in a few seconds.', (request.method === 'GET' && consolePage(request.url)) || CONSOLE));
    }
    this.logger.error(`Unexpected error on ${request.method} ${request.routeOptions.url ?? 'unknown route'} (request ${request.id})`, exception instanceof Error ? exception.stack : String(exception));
    sendOutcome(reply, this.pages.error(500, 'Something went wrong', 'The console could not complete this request. Try again later.', CONSOLE));
  }
}
