import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Resource } from '../filter/resource-path.js';
import { jsonObjectBody } from '../../http/content-negotiation.js';
import { SCIM_MEDIA_TYPE } from '../scim.constants.js';

/** RFC 7644 §3.1, §8.1: bodies are application/scim+json; plain application/json is taken too (Okta sends it on create). */
export function scimBody(request: FastifyRequest): Resource {
  return jsonObjectBody(request, [SCIM_MEDIA_TYPE, 'application/json']);
}

/** The If-Match header of a write (RFC 7644 §3.14), once. */
export function ifMatchOf(request: FastifyRequest): string | undefined {
  const value = request.headers['if-match'];
  return Array.isArray(value) ? value.join(',') : value;
}

/**
 * Writes a SCIM response: application/scim+json, never cached (it describes people), with the
 * resource's ETag and, for a creation, its Location (RFC 7644 §3.3, §3.14).
 */
export function sendScim(reply: FastifyReply, body: Resource, status = 200): void {
  const meta = body.meta as { version?: string; location?: string } | undefined;
  reply.header('Cache-Control', 'no-store').header('Content-Type', `${SCIM_MEDIA_TYPE}; charset=utf-8`);
  if (meta?.version) reply.header('ETag', meta.version);
  if (status === 201 && meta?.location) reply.header('Location', meta.location);
  void reply.code(status).send(JSON.stringify(body));
}
