import { ApiError } from '../http/api-error.js';

/**
 * 429 (RFC 6585 §4) with Retry-After in whole seconds (RFC 9110 §10.2.3) and the application's
 * error body, `too_many_requests` as everywhere else (http-error-code.ts). An ApiError, so that
 * the JSON filter keeps the code and header on /token too, where other framework 4xx become
 * invalid_request.
 */
export function tooManyRequests(retryAfterSeconds: number, description: string): ApiError {
  const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
  return new ApiError(429, `${description} Try again in ${seconds} second${seconds === 1 ? '' : 's'}.`, {
    headers: { 'Retry-After': String(seconds) },
  });
}
