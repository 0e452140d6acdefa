import { httpErrorCode } from './http-error-code.js';

/**
 * An HTTP error in the application's JSON shape, `{ "error", "error_description" }`, with its
 * status and any headers (Allow, Retry-After): thrown by the data API, content negotiation and the
 * rate limits, and written alike by every transport's filter. `error` defaults to the one code per
 * status of http-error-code.ts, so statuses map to codes the same way everywhere (docs/reference/errors.md).
 */
export class ApiError extends Error {
  readonly error: string;

  constructor(
    readonly status: number,
    readonly description: string,
    options: { error?: string; headers?: Record<string, string> } = {},
  ) {
    super(description);
    this.name = 'ApiError';
    this.error = options.error ?? httpErrorCode(status);
    this.headers = options.headers ?? {};
  }

  readonly headers: Record<string, string>;
}
