import { Catch, Logger, NotFoundException, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from './api-error.js';
import { describeInfrastructureError, logUnavailable, sendJsonError, serverError, type JsonError } from './json-error.js';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/**
 * Where a route declares its error transport for errors raised before its handler runs (a body
 * over the limit, an unparsable one): Fastify's route config, set with @RouteConfig next to the
 * transport's filter. Errors inside the handler and its guards reach that filter directly.
 */
export const ERROR_TRANSPORT = 'errorTransport';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The name of the route's error transport, among JsonExceptionFilterOptions.transports. */
    errorTransport?: string;
  }
}

export interface JsonExceptionFilterOptions {
  /** The Allow value of parametric paths (the REST API), which Fastify cannot list. */
  allowedMethodsOf?: (path: string) => string | undefined;
  /** The filters of the transports routes may declare under ERROR_TRANSPORT, by name. */
  transports?: Record<string, ExceptionFilter>;
}

/**
 * The application-wide fallback: errors that no route's own filter caught, which are those of no
 * route at all (404, 405 with Allow), of routes without a transport of their own (health,
 * metadata, documentation), and those Fastify raised before a route ran, which go to the filter of
 * the route's declared transport. Each transport (OAuth endpoints, browser pages, protected
 * resources) attaches its own filter where it is declared.
 */
@Catch()
export class JsonExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger(JsonExceptionFilter.name);

  constructor(private readonly options: JsonExceptionFilterOptions = {}) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const transport = request.routeOptions?.config?.errorTransport;
    const filter = typeof transport === 'string' ? this.options.transports?.[transport] : undefined;
    if (filter) {
      filter.catch(exception, host);
      return;
    }
    sendJsonError(host.switchToHttp().getResponse<FastifyReply>(), this.describe(exception, request));
  }

  private describe(exception: unknown, request: FastifyRequest): JsonError {
    if (exception instanceof ApiError) return { status: exception.status, error: exception.error, description: exception.description, headers: exception.headers };
    if (exception instanceof NotFoundException) {
      // RFC 9110 §15.5.6: a path that exists under other methods answers 405 with Allow, not 404.
      // findRoute matches the concrete path against parametric routes too (/register/:clientId),
      // where hasRoute only compares route patterns.
      const path = request.url.split('?')[0];
      const allowed = this.options.allowedMethodsOf?.(path) ?? METHODS.filter((method) => request.server.findRoute({ method, url: path }) !== null).join(', ');
      if (allowed.length > 0) {
        return { status: 405, error: 'method_not_allowed', description: `${request.method} is not allowed here; use ${allowed}`, headers: { Allow: allowed } };
      }
    }
    const known = describeInfrastructureError(exception);
    if (known?.status === 503) logUnavailable(exception, request, this.logger);
    return known ?? serverError(exception, request, this.logger);
  }
}
