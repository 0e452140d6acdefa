import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { InvalidRequestError } from '../errors/oauth-error.js';

/** RFC 6749 §3.2: token requests use application/x-www-form-urlencoded; anything else is invalid_request. */
@Injectable()
export class FormContentTypeGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const type = request.headers['content-type']?.split(';')[0].trim().toLowerCase();
    if (type !== 'application/x-www-form-urlencoded') {
      throw new InvalidRequestError('The request body must be application/x-www-form-urlencoded');
    }
    return true;
  }
}
