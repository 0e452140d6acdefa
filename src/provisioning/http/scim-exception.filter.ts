import { Catch, Inject, Injectable, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AccessDenied, describeAccessDenied } from '../../access/access-denied.js';
import { SecurityProfiles } from '../../clients/security-profile.js';
import { DomainError } from '../../common/domain-error.js';
import { fapiConfig, type FapiConfig } from '../../config/fapi.config.js';
import { isUniqueViolation } from '../../database/unique-violation.js';
import { ApiError } from '../../http/api-error.js';
import { describeInfrastructureError, logUnavailable, serverError } from '../../http/json-error.js';
import { SCHEMA, SCIM_MEDIA_TYPE, SCIM_TYPE, type ScimType } from '../scim.constants.js';
import { ScimError } from './scim-error.js';

interface Described {
  status: number;
  detail: string;
  scimType?: ScimType;
  headers?: Record<string, string>;
}

/**
 * Every error of /scim/v2 in RFC 7644 §3.12's shape (`schemas`, `status` as a string, `scimType`,
 * `detail`), as application/scim+json: refused tokens keep RFC 6750's status and challenge, rate
 * limits their Retry-After; anything unexpected is a 500 that reveals nothing.
 */
@Catch()
@Injectable()
export class ScimExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger(ScimExceptionFilter.name);
  private readonly dpopAlgorithms: readonly string[];

  constructor(@Inject(fapiConfig.KEY) fapi: FapiConfig) {
    this.dpopAlgorithms = new SecurityProfiles(fapi).dpopAlgorithms();
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const { status, detail, scimType, headers = {} } = this.describe(exception, request);
    reply.header('Cache-Control', 'no-store');
    for (const [name, value] of Object.entries(headers)) reply.header(name, value);
    void reply
      .code(status)
      .header('Content-Type', `${SCIM_MEDIA_TYPE}; charset=utf-8`)
      .send(JSON.stringify({ schemas: [SCHEMA.error], status: String(status), ...(scimType ? { scimType } : {}), detail }));
  }

  private describe(exception: unknown, request: FastifyRequest): Described {
    if (exception instanceof ScimError) return { status: exception.status, detail: exception.detail, scimType: exception.scimType, headers: { ...exception.headers } };
    if (exception instanceof AccessDenied) {
      const { status, description, challenge } = describeAccessDenied(exception, this.dpopAlgorithms);
      return { status, detail: description, headers: { 'WWW-Authenticate': challenge } };
    }
    if (exception instanceof ApiError) return { status: exception.status, detail: exception.description, scimType: exception.status === 400 ? SCIM_TYPE.invalidSyntax : undefined, headers: exception.headers };
    if (exception instanceof DomainError) return domainError(exception);
    // A concurrent create took the name between our check and the insert.
    if (isUniqueViolation(exception)) return { status: 409, detail: 'A resource with this unique attribute exists already', scimType: SCIM_TYPE.uniqueness };
    const known = describeInfrastructureError(exception);
    if (known?.status === 503) logUnavailable(exception, request, this.logger);
    if (known) return { status: known.status, detail: known.description, headers: known.headers };
    const failure = serverError(exception, request, this.logger);
    return { status: failure.status, detail: failure.description };
  }
}

/** The domain's refusals in SCIM's terms (RFC 7644 §3.12): taken names are 409 uniqueness, bad values 400 invalidValue. */
function domainError(error: DomainError): Described {
  switch (error.code) {
    case 'username_taken':
    case 'group_name_taken':
      return { status: 409, detail: error.message, scimType: SCIM_TYPE.uniqueness };
    case 'user_not_found':
    case 'group_not_found':
      return { status: 404, detail: error.message };
    default:
      return { status: 400, detail: error.message, scimType: SCIM_TYPE.invalidValue };
  }
}
