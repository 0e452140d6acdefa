import { createHash, timingSafeEqual } from 'node:crypto';
import { randomBase64url } from './random.js';

/**
 * Recognisable prefixes so that secret scanners (GitHub, GitLab, trufflehog) can find leaked
 * credentials; the random part carries 256 bits (RFC 6749 §10.10, RFC 6819 §5.1.4.2.2).
 */
export const SECRET_PREFIX = {
  accessToken: 'lk_at_',
  refreshToken: 'lk_rt_',
  authorizationCode: 'lk_ac_',
  clientSecret: 'lk_cs_',
  registrationToken: 'lk_rat_',
  /** Inside the encrypted login-session cookie; the sessions table keeps its hash. */
  session: 'lk_ss_',
  /** The reference in a pushed authorization request's request_uri (RFC 9126 §2.2). */
  pushedRequest: 'lk_par_',
  /** RFC 8628 §3.2: the device_code a device polls the token endpoint with. */
  deviceCode: 'lk_dc_',
  /** The secret in an emailed link: an invitation, a password reset, an address to confirm (issue 46). */
  emailLink: 'lk_el_',
} as const;

export type SecretPrefix = (typeof SECRET_PREFIX)[keyof typeof SECRET_PREFIX];

const RANDOM_BYTES = 32;

/** A fresh opaque secret: prefix + 256 random bits, base64url (URL- and form-safe). */
export function generateSecret(prefix: SecretPrefix): string {
  return prefix + randomBase64url(RANDOM_BYTES);
}

/**
 * SHA-256 of a high-entropy secret, hex. A slow password hash adds nothing for 256-bit random
 * values (nobody can brute-force them), and a fast one keeps every token check to one hash and
 * one indexed lookup. Human passwords use argon2id instead (users/password-hasher.ts).
 */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Constant-time comparison of two hex digests (or any two strings), safe for unequal lengths. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = createHash('sha256').update(a, 'utf8').digest();
  const right = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(left, right) && a.length === b.length;
}

/** Constant-time check of a presented secret against its stored hash. */
export function secretMatchesHash(presented: string, storedHash: string): boolean {
  return constantTimeEqual(hashSecret(presented), storedHash);
}
