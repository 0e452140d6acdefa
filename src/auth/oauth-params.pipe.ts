import { Injectable, type PipeTransform } from '@nestjs/common';
import { validateSync } from 'class-validator';
import { InvalidRequestError } from './errors/oauth-error.js';
import { compileParamsCheck, type ParamsCheck } from './params-check.js';

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
  /** The DTO's parameters (its fields, each initialised to undefined) and the repeatable ones: read once, not per request. */
  private readonly known: readonly string[];
  private readonly repeatable: readonly string[];
  /** The DTO's decorators compiled once (params-check.ts); class-validator then runs only to word a refusal. */
  private readonly accepts: ParamsCheck | undefined;

  constructor(private readonly dto: new () => T) {
    this.known = Object.keys(new dto());
    this.repeatable = (dto as { repeatable?: readonly string[] }).repeatable ?? [];
    this.accepts = compileParamsCheck(dto);
  }

  transform(value: unknown): T {
    if (value === null || value === undefined) value = {};
    if (typeof value !== 'object' || Array.isArray(value) || Buffer.isBuffer(value)) {
      throw new InvalidRequestError('The request parameters could not be read');
    }
    const params = value as Record<string, unknown>;
    // The DTOs hold strings (and arrays of strings where repeatable), with no class-transformer
    // decorators: the instance is the picked parameters on a new DTO, without a transformation pass.
    const instance = new this.dto() as Record<string, unknown>;
    for (const name of this.known) {
      const param = params[name];
      if (Array.isArray(param) && !this.repeatable.includes(name)) throw new InvalidRequestError(`The ${name} parameter must not be repeated`);
      instance[name] = param === '' ? undefined : param;
    }
    if (this.accepts?.(instance)) return instance as T;
    const errors = validateSync(instance, { forbidUnknownValues: false });
    if (errors.length > 0) {
      const first = errors[0];
      const message = Object.values(first.constraints ?? {})[0] ?? `${first.property} is invalid`;
      throw new InvalidRequestError(message);
    }
    return instance as T;
  }
}
