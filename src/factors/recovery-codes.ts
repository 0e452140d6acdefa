import { createHash, randomBytes } from 'node:crypto';

export const RECOVERY_CODE_COUNT = 10;
/** Lower-case base32 without the look-alikes people mistype (RFC 4648's alphabet has no 0, 1, 8, 9). */
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

/** A new recovery code: 16 base32 characters (80 random bits) in four groups, `abcd-efgh-ijkl-mnop`. */
export function newRecoveryCode(): string {
  const bytes = randomBytes(16);
  const chars = [...bytes].map((byte) => ALPHABET[byte & 31]).join('');
  return chars.match(/.{4}/g)!.join('-');
}

/** What the person typed, as stored: spaces and dashes dropped, lower case. */
export function normalizeRecoveryCode(typed: string): string {
  return typed.replace(/[\s-]/g, '').toLowerCase();
}

/** Whether a typed value looks like a recovery code rather than a one-time code. */
export function looksLikeRecoveryCode(typed: string): boolean {
  return /^[a-z2-7]{16}$/.test(normalizeRecoveryCode(typed));
}

/**
 * The stored form: SHA-256 of the person's id and the code. 80 random bits make a slow hash
 * unnecessary (as for tokens, common/secrets.ts); the id keeps equal codes of two people apart.
 */
export function recoveryCodeHash(userId: string, code: string): string {
  return createHash('sha256').update(`${userId}\n${normalizeRecoveryCode(code)}`, 'utf8').digest('hex');
}
