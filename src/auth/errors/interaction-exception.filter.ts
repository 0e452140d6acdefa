import { Catch, HttpException, Inject, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { appConfig, type AppConfig } from '../../config/app.config.js';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '../../database/database-unavailable.js';
import { deliver, errorResponse } from '../authorize/authorization-response.js';
import { sendOutcome } from '../interaction/interaction-responder.js';
import { Pages } from '../interaction/pages.js';
import { AuthorizationRedirectError, OAuthError } from './oauth-error.js';
import { httpErrorCode } from '../../http/http-error-code.js';

/**
 * Errors of the browser-facing endpoints (authorize, login, consent). An error whose client and
 * redirect URI are verified goes back to the client; every other one is a page for the person,
 * never a redirect (RFC 6749 §4.1.2.1; node-oidc-provider's authorization_error_handler).
 */
@Catch()
export class InteractionExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger(InteractionExceptionFilter.name);

  constructor(
    private readonly pages: Pages,
    @Inject(appConfig.KEY) private readonly app: AppConfig,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    const request = http.getRequest<FastifyRequest>();

    if (exception instanceof AuthorizationRedirectError) {
      const status = request.method === 'POST' ? 303 : 302;
      const response = errorResponse(exception.redirectUri, exception.oauthError, exception.state, this.app.issuer, exception.responseMode);
      sendOutcome(reply, deliver(response, status, this.pages));
      return;
    }
    if (exception instanceof OAuthError) {
      sendOutcome(reply, this.pages.error(exception.status, exception.error, exception.description));
      return;
    }
    if (exception instanceof HttpException && exception.getStatus() < 500) {
      sendOutcome(reply, this.pages.error(exception.getStatus(), httpErrorCode(exception.getStatus()), exception.message));
      return;
    }
    if (isDatabaseUnavailable(exception)) {
      this.logger.warn(`Database unavailable on ${request.method} ${request.routeOptions.url ?? 'unknown route'} (request ${request.id}): ${exception instanceof Error ? exception.message : String(exception)}`);
      void reply.header('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS));
      sendOutcome(reply, this.pages.error(503, 'temporarily_unavailable', 'The service is temporarily unavailable. Please try again in a few seconds.'));
      return;
    }
    this.logger.error(`Unexpected error on ${request.method} ${request.routeOptions.url ?? 'unknown route'} (request ${request.id})`, exception instanceof Error ? exception.stack : String(exception));
    sendOutcome(reply, this.pages.error(500, 'server_error', 'The server could not complete this request. Please try again later.'));
  }
}
