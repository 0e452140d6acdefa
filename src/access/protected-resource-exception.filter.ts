import { Catch, Inject, Injectable, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SecurityProfiles } from '../clients/security-profile.js';
import { DomainError } from '../common/domain-error.js';
import { fapiConfig, type FapiConfig } from '../config/fapi.config.js';
import { ApiError } from '../http/api-error.js';
import { domainErrorResponse } from '../http/domain-error-response.js';
import { describeInfrastructureError, logUnavailable, sendJsonError, serverError, type JsonError } from '../http/json-error.js';
import { AccessDenied, describeAccessDenied } from './access-denied.js';

/**
 * Errors of the routes an access token opens (the data API, client registration): JSON with an
 * `error` key, and for a refused token the RFC 6750 §3 status and `WWW-Authenticate` challenge.
 * Attached by @RequireScope and @RequireAccess, where a route declares itself protected.
 */
@Catch()
@Injectable()
export class ProtectedResourceExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger(ProtectedResourceExceptionFilter.name);
  private readonly dpopAlgorithms: readonly string[];

  // The filter is built in every module that declares a protected route, where only global
  // providers (the configuration) are sure to resolve: the profile rule itself stays in SecurityProfiles.
  constructor(@Inject(fapiConfig.KEY) fapi: FapiConfig) {
    this.dpopAlgorithms = new SecurityProfiles(fapi).dpopAlgorithms();
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    sendJsonError(host.switchToHttp().getResponse<FastifyReply>(), this.describe(exception, request));
  }

  private describe(exception: unknown, request: FastifyRequest): JsonError {
    if (exception instanceof AccessDenied) {
      const { status, error, description, challenge } = describeAccessDenied(exception, this.dpopAlgorithms);
      return { status, error, description, headers: { 'WWW-Authenticate': challenge } };
    }
    if (exception instanceof ApiError) return { status: exception.status, error: exception.error, description: exception.description, headers: exception.headers };
    if (exception instanceof DomainError) return domainErrorResponse(exception);
    const known = describeInfrastructureError(exception);
    if (known?.status === 503) logUnavailable(exception, request, this.logger);
    return known ?? serverError(exception, request, this.logger);
  }
}
