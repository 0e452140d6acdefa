import { createHash } from 'node:crypto';

/**
 * The storage key of a rate-limit subject: a SHA-256 of its parts, so that usernames and
 * addresses never sit in Redis in clear and every key has the same short length.
 */
export function rateLimitKey(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\n'), 'utf8').digest('hex');
}
