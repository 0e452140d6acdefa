import { Catch, HttpException, Logger, NotFoundException, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '../../database/database-unavailable.js';
import { ApiError } from '../../resources/api-error.js';
import { httpErrorCode } from './http-error-code.js';
import { InvalidClientError, OAuthError } from './oauth-error.js';

/** Endpoints that speak RFC 6749 §5.2 errors: even a framework-level 4xx there carries an OAuth error code. */
const OAUTH_JSON_ENDPOINTS = new Set(['/token', '/revoke', '/introspect']);
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

interface FastifyError {
  statusCode?: number;
  code?: string;
  message: string;
}

/**
 * The application-wide error shape: `{ "error": "<snake_case_code>", "error_description": "…" }`
 * with the matching status, written through the Fastify reply. Anything unexpected becomes a 500
 * `server_error` that reveals nothing; its details go to the log only.
 */
@Catch()
export class JsonExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger(JsonExceptionFilter.name);

  /** @param allowedMethodsOf the Allow value of parametric paths (the REST API), which Fastify cannot list. */
  constructor(private readonly allowedMethodsOf: (path: string) => string | undefined = () => undefined) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    const request = http.getRequest<FastifyRequest>();
    const { status, body, headers } = this.describe(exception, request);
    if (status === 503) {
      this.logger.warn(`Database unavailable on ${request.method} ${request.routeOptions?.url ?? 'unknown route'} (request ${request.id}): ${exception instanceof Error ? exception.message : String(exception)}`);
    } else if (status >= 500) {
      this.logger.error(`Unexpected error on ${request.method} ${request.routeOptions?.url ?? 'unknown route'} (request ${request.id})`, exception instanceof Error ? exception.stack : String(exception));
    }
    // Error responses of the token endpoint must not be cached either (RFC 6749 §5.1 spirit, RFC 9700 §4.2.4).
    reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
    for (const [name, value] of Object.entries(headers)) reply.header(name, value);
    void reply.code(status).header('Content-Type', 'application/json;charset=UTF-8').send(JSON.stringify(body));
  }

  private describe(exception: unknown, request: FastifyRequest): { status: number; body: Record<string, string>; headers: Record<string, string> } {
    if (exception instanceof OAuthError) {
      // RFC 6749 §5.2: invalid_client answers 401 with the authentication scheme the client may use.
      const headers: Record<string, string> = exception instanceof InvalidClientError ? { 'WWW-Authenticate': 'Basic realm="latchkey", charset="UTF-8"' } : {};
      return { status: exception.status, body: { error: exception.error, error_description: exception.description }, headers };
    }
    if (exception instanceof ApiError) {
      return { status: exception.status, body: { error: exception.error, error_description: exception.description }, headers: exception.headers };
    }
    if (isDatabaseUnavailable(exception)) {
      // Not this request's fault, nor a bug: the load balancer or client may try again shortly,
      // and this instance recovers by itself when the database returns (readiness reports it).
      const headers = { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) };
      return { status: 503, body: { error: 'temporarily_unavailable', error_description: 'The service is temporarily unavailable; try again shortly' }, headers };
    }
    const path = request.url.split('?')[0];
    if (exception instanceof NotFoundException) {
      // RFC 9110 §15.5.6: a path that exists under other methods answers 405 with Allow, not 404.
      // findRoute matches the concrete path against parametric routes too (/register/:clientId),
      // where hasRoute only compares route patterns.
      const allowed = this.allowedMethodsOf(path) ?? METHODS.filter((method) => request.server.findRoute({ method, url: path }) !== null).join(', ');
      if (allowed.length > 0) {
        return { status: 405, body: { error: 'method_not_allowed', error_description: `${request.method} is not allowed here; use ${allowed}` }, headers: { Allow: allowed } };
      }
    }
    const { status, message } = this.statusOf(exception);
    const error = status < 500 && OAUTH_JSON_ENDPOINTS.has(path) ? 'invalid_request' : httpErrorCode(status);
    const description = status >= 500 ? 'The server could not complete this request' : message;
    return { status, body: { error, error_description: description }, headers: {} };
  }

  private statusOf(exception: unknown): { status: number; message: string } {
    if (exception instanceof HttpException) return { status: exception.getStatus(), message: exception.message };
    // Errors raised by Fastify itself before a route runs (body too large, malformed JSON, bad content type).
    const fastifyError = exception as FastifyError;
    if (typeof fastifyError?.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
      return { status: fastifyError.statusCode, message: fastifyError.message };
    }
    return { status: 500, message: 'Internal error' };
  }
}
