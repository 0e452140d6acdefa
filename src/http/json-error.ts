import { HttpException, type Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '../database/database-unavailable.js';
import { errorDescription } from '../common/error-description.js';
import { httpErrorCode } from './http-error-code.js';

/** An error response in the application's one JSON shape: `{ "error": "<snake_case_code>", "error_description": "…" }`. */
export interface JsonError {
  status: number;
  error: string;
  description: string;
  headers?: Record<string, string>;
}

/** Writes the error through the Fastify reply. Never cached: error responses may follow a request that carried credentials (RFC 9700 §4.2.4). */
export function sendJsonError(reply: FastifyReply, { status, error, description, headers = {} }: JsonError): void {
  reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
  for (const [name, value] of Object.entries(headers)) reply.header(name, value);
  void reply.code(status).header('Content-Type', 'application/json;charset=UTF-8').send(JSON.stringify({ error, error_description: errorDescription(description) }));
}

/**
 * What every transport answers alike: the database cannot be reached (503 with Retry-After: not
 * this request's fault, nor a bug; the load balancer or client may try again shortly, and the
 * instance recovers by itself), or a framework-level 4xx (a Nest HttpException, or an error Fastify
 * raised before the route ran: body too large, malformed JSON, bad content type). Undefined for
 * anything else, which the caller treats as a bug.
 */
export function describeInfrastructureError(exception: unknown): JsonError | undefined {
  if (isDatabaseUnavailable(exception)) {
    return {
      status: 503,
      error: 'temporarily_unavailable',
      description: 'The service is temporarily unavailable; try again shortly',
      headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) },
    };
  }
  const status = clientErrorStatus(exception);
  if (status === undefined) return undefined;
  return { status, error: httpErrorCode(status), description: (exception as Error).message };
}

/** The 4xx status of a framework-level error, or undefined. */
function clientErrorStatus(exception: unknown): number | undefined {
  if (exception instanceof HttpException) return exception.getStatus() < 500 ? exception.getStatus() : undefined;
  const statusCode = (exception as { statusCode?: unknown } | null)?.statusCode;
  return typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500 ? statusCode : undefined;
}

/** A 500 that reveals nothing; the details go to the log only. */
export function serverError(exception: unknown, request: FastifyRequest, logger: Logger): JsonError {
  logger.error(`Unexpected error on ${request.method} ${request.routeOptions?.url ?? 'unknown route'} (request ${request.id})`, exception instanceof Error ? exception.stack : String(exception));
  return { status: 500, error: 'server_error', description: 'The server could not complete this request' };
}

/** A lost database is worth a warning with the route, not a stack trace. */
export function logUnavailable(exception: unknown, request: FastifyRequest, logger: Logger): void {
  logger.warn(`Database unavailable on ${request.method} ${request.routeOptions?.url ?? 'unknown route'} (request ${request.id}): ${exception instanceof Error ? exception.message : String(exception)}`);
}
