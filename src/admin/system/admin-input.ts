import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../http/api-error.js';
import { jsonObjectBody } from '../../http/content-negotiation.js';

/**
 * A write's JSON body with only the fields the route knows: a misspelt field (`displayName` for
 * `display_name`) is refused (400), not silently ignored while the rest is applied.
 */
export function adminBody(request: FastifyRequest, fields: readonly string[]): Record<string, unknown> {
  return onlyKnown(jsonObjectBody(request, ['application/json']), fields, 'field');
}

/** A request's query parameters, refused (400) when one is not among `names`: a misspelt filter would otherwise widen the answer. */
export function adminQuery(request: FastifyRequest, names: readonly string[]): Record<string, unknown> {
  return onlyKnown((request.query ?? {}) as Record<string, unknown>, names, 'query parameter');
}

function onlyKnown(input: Record<string, unknown>, known: readonly string[], what: string): Record<string, unknown> {
  const unknown = Object.keys(input).filter((key) => !known.includes(key));
  if (unknown.length > 0) throw new ApiError(400, `Unknown ${what} ${unknown.map((key) => JSON.stringify(key)).join(', ')}; this route takes ${known.length > 0 ? known.join(', ') : 'none'}`, { error: 'invalid_request' });
  return input;
}

/** A cursor whose id part is not one of ours: refused as any cursor this server did not issue (PostgreSQL would refuse it as a uuid). */
export function invalidCursor(): ApiError {
  return new ApiError(400, 'The cursor is not one this server issued: follow the next link of the previous page', { error: 'invalid_request' });
}
