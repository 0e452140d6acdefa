import type { Resource } from '../filter/resource-path.js';
import { versionOf } from '../resources/meta.js';
import { ScimError } from './scim-error.js';

/**
 * RFC 7644 §3.14, RFC 9110 §13.1.1: a write with If-Match goes ahead only while the resource is at
 * one of the versions named ("*": any). Versions are weak ETags; a client may send them with or
 * without the W/ prefix. Otherwise 412.
 */
export function assertIfMatch(ifMatch: string | undefined, current: Resource): void {
  if (ifMatch === undefined || ifMatch.trim() === '*') return;
  const opaque = (tag: string): string => tag.trim().replace(/^W\//, '');
  const version = opaque(versionOf(current));
  if (!ifMatch.split(',').some((tag) => opaque(tag) === version)) {
    throw new ScimError(412, 'The resource has changed since that version (If-Match): read it again and retry');
  }
}
