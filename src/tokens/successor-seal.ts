import { hkdfSync } from 'node:crypto';
import { SealedBox } from '../common/sealed-box.js';
import type { IssuedTokens } from './tokens.service.js';

/** HKDF's salt and info (RFC 5869 §3.1, §3.2): this purpose only, so the key is of no use elsewhere. */
const SALT = 'latchkey refresh successor';
const INFO = 'aes-256-gcm v1';

/** What a rotated refresh token keeps of its rotation, sealed: the pair it answered and what was asked for it. */
export interface Successor {
  issued: IssuedTokens;
  /** The first use's request (scope, resources, DPoP key), as RefreshRepeats compares a repeat with it. */
  request: string;
}

/**
 * The box of one refresh token's successor: AES-256-GCM under a key derived with HKDF-SHA256
 * (RFC 5869) from the refresh token's own value, which is stored only as its SHA-256. Whoever holds
 * the database (a backup, a replica, the server's own encryption keys) cannot open it; only a
 * request that presents the rotated token can, and that request is the one the grace answers.
 * The refresh token is 256 random bits, so it needs no stretching.
 */
function boxOf(refreshToken: string): SealedBox {
  return new SealedBox('refresh successor', [Buffer.from(hkdfSync('sha256', refreshToken, SALT, INFO, 32))]);
}

/** `successor`, sealed with `refreshToken` and bound to its row (`tokenId`: a sealed value copied to another row does not open). */
export function sealSuccessor(refreshToken: string, tokenId: string, successor: Successor): string {
  return boxOf(refreshToken).seal(JSON.stringify(successor), tokenId);
}

/** The successor, or undefined when the value does not open with this token on this row. */
export function openSuccessor(refreshToken: string, tokenId: string, sealed: string): Successor | undefined {
  const plaintext = boxOf(refreshToken).open(sealed, tokenId);
  return plaintext === undefined ? undefined : (JSON.parse(plaintext) as Successor);
}
