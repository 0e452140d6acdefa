import type { ScimType } from '../scim.constants.js';

/**
 * An error of the SCIM protocol (RFC 7644 §3.12): its HTTP status, the scimType a 400 or 409
 * carries, and a detail a connector's administrator can read. Immutable; written only by
 * ScimExceptionFilter.
 */
export class ScimError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly scimType?: ScimType,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(detail);
    this.name = 'ScimError';
  }

  static badRequest(scimType: ScimType, detail: string): ScimError {
    return new ScimError(400, detail, scimType);
  }

  static notFound(detail: string): ScimError {
    return new ScimError(404, detail);
  }
}
