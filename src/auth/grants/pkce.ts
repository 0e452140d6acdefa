import { createHash } from 'node:crypto';
import { constantTimeEqual } from '../../common/secrets.js';

/** RFC 7636 §4.1 / §4.2: the verifier and the challenge are both 43 to 128 unreserved characters. */
export const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/;

/** RFC 7636 §4.6: BASE64URL(SHA256(ASCII(code_verifier))) == code_challenge, compared in constant time. */
export function verifyS256(verifier: string, challenge: string): boolean {
  const computed = createHash('sha256').update(verifier, 'ascii').digest('base64url');
  return constantTimeEqual(computed, challenge);
}
