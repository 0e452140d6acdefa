import { httpErrorCode } from './http-error-code.js';

/**
 * An error of the REST data API: `{ "error", "error_description" }` with its status and any headers
 * (Allow, WWW-Authenticate). `error` defaults to the one code per status of http-error-code.ts,
 * so the whole API maps statuses to codes the same way (README, "Errors").
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
