import { createHash } from 'node:crypto';
import type { Resource } from '../filter/resource-path.js';

/**
 * Adds `meta` (RFC 7643 §3.1) with `version`, the resource's weak ETag (RFC 7644 §3.14): a digest
 * of the representation itself, so it changes exactly when what a client reads changes (a group's
 * members, a person's groups), whatever the timestamps' precision on SQLite.
 */
export function withMeta(body: Resource, meta: { resourceType: string; created: Date; lastModified: Date; location: string }): Resource {
  const version = `W/"${createHash('sha256').update(JSON.stringify(body)).digest('base64url').slice(0, 27)}"`;
  return { ...body, meta: { resourceType: meta.resourceType, created: meta.created.toISOString(), lastModified: meta.lastModified.toISOString(), location: meta.location, version } };
}

export function versionOf(resource: Resource): string {
  return (resource.meta as { version: string }).version;
}
