import { Catch, Injectable, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../http/api-error.js';
import { describeInfrastructureError, logUnavailable, sendJsonError, serverError, type JsonError } from '../../http/json-error.js';
import { InvalidClientError, OAuthError } from './oauth-error.js';

/**
 * Errors of the client-authenticated endpoints (token, revocation, introspection): form in, JSON
 * out, in RFC 6749 §5.2's shape. Attached by OAuthFormEndpoint, where the transport is declared;
 * a framework-level 4xx there (a body over the limit, an unparsable one) carries an OAuth error
 * code too: invalid_request.
 */
@Catch()
@Injectable()
export class OAuthExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger(OAuthExceptionFilter.name);

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    sendJsonError(host.switchToHttp().getResponse<FastifyReply>(), this.describe(exception, request));
  }

  private describe(exception: unknown, request: FastifyRequest): JsonError {
    if (exception instanceof OAuthError) {
      // RFC 6749 §5.2: invalid_client answers 401 with the authentication scheme the client may use.
      const headers: Record<string, string> = exception instanceof InvalidClientError && exception.basicChallenge ? { 'WWW-Authenticate': 'Basic realm="latchkey", charset="UTF-8"' } : {};
      return { status: exception.status, error: exception.error, description: exception.description, headers };
    }
    // The rate limit's 429 keeps its own code and Retry-After (RFC 6585 §4).
    if (exception instanceof ApiError) return { status: exception.status, error: exception.error, description: exception.description, headers: exception.headers };
    const known = describeInfrastructureError(exception);
    if (known?.status === 503) {
      logUnavailable(exception, request, this.logger);
      return known;
    }
    return known ? { ...known, error: 'invalid_request' } : serverError(exception, request, this.logger);
  }
}
