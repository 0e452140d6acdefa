import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Item } from '../../items/item.entity.js';
import { ApiError } from '../../http/api-error.js';

/** An item's strong ETag: its version, bumped by every write (RFC 9110 §8.8.3). */
export function itemEtag(item: Item): string {
  return `"v${item.version}"`;
}

/** A weak ETag for a generated representation such as a page of a collection. */
export function weakEtag(body: string): string {
  return `W/"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
}

/** The entity-tags of an If-Match / If-None-Match header; `*` as itself. */
function entityTags(header: string): string[] {
  return header.split(',').map((tag) => tag.trim()).filter(Boolean);
}

/** RFC 9110 §13.1.2: If-None-Match uses the weak comparison. */
export function noneMatch(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (header === undefined) return true;
  const opaque = (tag: string) => tag.replace(/^W\//, '');
  return !entityTags(header).some((tag) => tag === '*' || opaque(tag) === opaque(etag));
}

/**
 * RFC 9110 §13.1.1: If-Match uses the strong comparison; a stale or unknown tag is 412, so that two
 * writers behind a load balancer never overwrite each other silently.
 */
export function assertIfMatch(request: FastifyRequest, item: Item): void {
  const header = request.headers['if-match'];
  if (header === undefined) return;
  const current = itemEtag(item);
  if (!entityTags(header).some((tag) => tag === '*' || tag === current)) {
    throw new ApiError(412, `The item has changed: its current ETag is ${current}`);
  }
}

export function hasIfMatch(request: FastifyRequest): boolean {
  return request.headers['if-match'] !== undefined;
}
