import { randomInt } from 'node:crypto';
import { hashSecret } from '../common/secrets.js';

/**
 * RFC 8628 §6.1: a user code a person reads on one screen and types on another, so short and
 * unambiguous: 8 characters of 20 consonants (no vowels, so no words; no digits to confuse with
 * letters), shown as BCDF-GHJK. That is 20^8 ≈ 2^34.6 codes, of which only the few pending ones
 * answer: with the wrong-code throttle (UserCodeThrottle) a guesser gets nowhere in a code's life.
 */
const ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const LENGTH = 8;

/** A fresh user code, as shown to the person: two groups of four joined by a dash. */
export function generateUserCode(): string {
  let code = '';
  for (let i = 0; i < LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/**
 * What a person typed, as the code it stands for: case and the dash or spaces do not matter
 * (§6.1: "the server should be case-insensitive ... and ignore the punctuation"). Undefined when it
 * cannot be a code at all (a wrong one that still counts against the guesser).
 */
export function normalizeUserCode(typed: string): string | undefined {
  const code = typed.toUpperCase().replace(/[\s-]/g, '');
  return code.length === LENGTH && [...code].every((c) => ALPHABET.includes(c)) ? code : undefined;
}

/** The normalized code grouped for display (BCDF-GHJK). */
export function displayUserCode(normalized: string): string {
  return `${normalized.slice(0, 4)}-${normalized.slice(4)}`;
}

/** What the table keeps of a user code: the SHA-256 of its normalized form, the only way rows are looked up by it. */
export function userCodeHash(normalized: string): string {
  return hashSecret(`user_code:${normalized}`);
}
