import { Injectable, type PipeTransform } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { InvalidRequestError } from './errors/oauth-error.js';

/**
 * Turns a parsed query string or form body into a validated DTO for an OAuth endpoint.
 * Every problem becomes invalid_request with a description naming the parameter:
 * - a parameter sent more than once (RFC 6749 §3.1, §3.2: "MUST NOT be included more than once");
 * - a value that is not a string or breaks the DTO's constraints.
 * Unknown parameters are ignored, as RFC 6749 §3.1 requires. A DTO lists the parameters an
 * extension lets repeat (RFC 8707 §2: resource) in a static `repeatable`; the DTO checks them.
 */
@Injectable()
export class OAuthParamsPipe<T extends object> implements PipeTransform<unknown, T> {
  constructor(private readonly dto: new () => T) {}

  transform(value: unknown): T {
    if (value === null || value === undefined) value = {};
    if (typeof value !== 'object' || Array.isArray(value) || Buffer.isBuffer(value)) {
      throw new InvalidRequestError('The request parameters could not be read');
    }
    const params = value as Record<string, unknown>;
    const known = Object.keys(new this.dto());
    const repeatable: readonly string[] = (this.dto as { repeatable?: readonly string[] }).repeatable ?? [];
    for (const name of known) {
      if (Array.isArray(params[name]) && !repeatable.includes(name)) throw new InvalidRequestError(`The ${name} parameter must not be repeated`);
    }
    const picked = Object.fromEntries(known.filter((k) => params[k] !== undefined && params[k] !== '').map((k) => [k, params[k]]));
    const instance = plainToInstance(this.dto, picked);
    const errors = validateSync(instance, { forbidUnknownValues: false });
    if (errors.length > 0) {
      const first = errors[0];
      const message = Object.values(first.constraints ?? {})[0] ?? `${first.property} is invalid`;
      throw new InvalidRequestError(message);
    }
    return instance;
  }
}
