import { createHash } from 'node:crypto';

/**
 * The public name of a sign-in session, as ID tokens and logout tokens carry it (OpenID Connect
 * Front-/Back-Channel Logout `sid`): derived from the row id (itself the SHA-256 of the cookie's
 * secret), so it needs no column, and it reveals nothing that opens the session.
 */
export function publicSessionId(sessionRowId: string): string {
  return createHash('sha256').update('latchkey sid\0').update(sessionRowId).digest('base64url');
}
