import { Secret, TOTP } from 'otpauth';

/** RFC 6238 as every authenticator app expects it: HMAC-SHA-1, 6 digits, 30-second steps (§4, §5.2). */
const PERIOD_SECONDS = 30;
const DIGITS = 6;
const ALGORITHM = 'SHA1';
/** One step of clock skew either way (RFC 6238 §5.2 recommends at most one). */
const WINDOW = 1;
/** 160 bits, the HMAC-SHA-1 output length (RFC 4226 §4 R6 asks for at least 128). */
const SECRET_BYTES = 20;

/** A fresh secret, base32 (RFC 4648), as authenticator apps take it typed or in an otpauth URI. */
export function newTotpSecret(): string {
  return new Secret({ size: SECRET_BYTES }).base32;
}

function totp(secretBase32: string, label = 'latchkey', issuer = 'Latchkey'): TOTP {
  return new TOTP({ issuer, label, algorithm: ALGORITHM, digits: DIGITS, period: PERIOD_SECONDS, secret: Secret.fromBase32(secretBase32) });
}

/** The otpauth:// URI (the Key Uri Format authenticator apps read from a QR code). */
export function otpauthUri(secretBase32: string, label: string, issuer: string): string {
  return totp(secretBase32, label, issuer).toString();
}

/** The time step of an instant (RFC 6238 §4.2 T). */
export function timeStep(now: Date): number {
  return Math.floor(now.getTime() / 1000 / PERIOD_SECONDS);
}

/**
 * The time step whose code `code` is, within one step of `now`, or undefined when it is none of
 * them. Whether that step was used already is the caller's (the database's) question.
 */
export function matchingStep(secretBase32: string, code: string, now: Date): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const delta = totp(secretBase32).validate({ token: code, timestamp: now.getTime(), window: WINDOW });
  return delta === null ? undefined : timeStep(now) + delta;
}

/** The base32 secret in groups of four, easier to type. */
export function groupedSecret(secretBase32: string): string {
  return secretBase32.replace(/(.{4})/g, '$1 ').trim();
}
