import type { FastifyReply, FastifyRequest } from 'fastify';
import { noneMatch } from './conditional-requests.js';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export interface Representation {
  body: unknown;
  etag: string;
  /** A Date, or its ISO text (an answer kept for an Idempotency-Key comes back from JSON). */
  lastModified?: Date | string;
  status?: number;
  headers?: Record<string, string>;
}

/**
 * Sends a JSON representation with its validators (ETag, Last-Modified). A GET or HEAD whose
 * If-None-Match already holds the ETag gets 304 with no body (RFC 9110 §13.1.2). Responses are
 * private to the token's owner and revalidated on every use.
 */
export function sendRepresentation(request: FastifyRequest, reply: FastifyReply, representation: Representation): void {
  reply.header('ETag', representation.etag).header('Cache-Control', 'private, no-cache').header('Vary', 'Authorization');
  if (representation.lastModified) reply.header('Last-Modified', new Date(representation.lastModified).toUTCString());
  for (const [name, value] of Object.entries(representation.headers ?? {})) reply.header(name, value);
  if ((request.method === 'GET' || request.method === 'HEAD') && !noneMatch(request, representation.etag)) {
    void reply.code(304).send();
    return;
  }
  void reply.code(representation.status ?? 200).header('Content-Type', JSON_CONTENT_TYPE).send(JSON.stringify(representation.body));
}
