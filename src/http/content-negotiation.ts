import type { FastifyRequest } from 'fastify';
import { ApiError } from './api-error.js';

/** RFC 9110 §12.5.1: a request whose Accept excludes JSON gets 406 instead of a body it cannot use. */
export function assertAcceptsJson(request: FastifyRequest): void {
  const accept = request.headers.accept;
  if (accept === undefined || accept.trim() === '') return;
  const acceptable = accept.split(',').some((range) => {
    const [type, ...parameters] = range.trim().toLowerCase().split(';').map((part) => part.trim());
    const q = parameters.find((p) => p.startsWith('q='));
    if (q !== undefined && Number(q.slice(2)) === 0) return false;
    return type === '*/*' || type === 'application/*' || type === 'application/json';
  });
  if (!acceptable) throw new ApiError(406, 'This API answers with application/json only');
}

/** The media type of the request body without parameters, lower-cased; undefined when none was sent. */
export function mediaTypeOf(request: FastifyRequest): string | undefined {
  const header = request.headers['content-type'];
  return header === undefined ? undefined : header.split(';')[0].trim().toLowerCase();
}

/**
 * The JSON object a write sends. Fastify has already parsed application/json (malformed JSON is
 * answered 400 before the route); the other accepted types arrive as raw bytes and are parsed here.
 */
export function jsonObjectBody(request: FastifyRequest, acceptedTypes: readonly string[]): Record<string, unknown> {
  const type = mediaTypeOf(request);
  if (type === undefined || !acceptedTypes.includes(type)) {
    throw new ApiError(415, `Send the body as ${acceptedTypes.join(' or ')}`);
  }
  let body: unknown = request.body;
  if (Buffer.isBuffer(body)) {
    try {
      body = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body), rejectProtoKeys);
    } catch {
      throw new ApiError(400, 'The body is not valid JSON in UTF-8');
    }
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ApiError(400, 'The body must be a JSON object');
  if (deeperThan(body, MAX_DEPTH)) throw new ApiError(400, `The body nests deeper than ${MAX_DEPTH} levels`);
  return body as Record<string, unknown>;
}

const MAX_DEPTH = 32;

/** A `__proto__` member would set a prototype further on instead of an attribute: refuse it, as Fastify's JSON parser does. */
function rejectProtoKeys(key: string, value: unknown): unknown {
  if (key === '__proto__') throw new SyntaxError('__proto__ is not allowed');
  return value;
}

/** Iterative, so that the check itself cannot overflow the stack (the merge patch recursion would). */
function deeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth > max) return true;
    for (const inner of Object.values(current)) stack.push([inner, depth + 1]);
  }
  return false;
}
