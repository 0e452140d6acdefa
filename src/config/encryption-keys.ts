import { ConfigValidationError } from './validate-env.js';

/**
 * Parses a list of data-encryption keys: base64 of 32 bytes each, comma-separated, newest first
 * (older ones still decrypt during a rotation). Base64 that does not round-trip, or a length other
 * than 32 bytes, is a typo or the wrong kind of value, and stops the start with a clear message.
 */
export function parseEncryptionKeys(name: string, value: string | undefined): Buffer[] {
  const encoded = value?.split(',').map((k) => k.trim()).filter(Boolean) ?? [];
  const keys = encoded.map((k) => Buffer.from(k, 'base64'));
  if (encoded.some((k, i) => keys[i].length !== 32 || keys[i].toString('base64').replace(/=+$/, '') !== k.replace(/=+$/, ''))) {
    throw new ConfigValidationError([`${name}: every comma-separated key must be the base64 of 32 random bytes (openssl rand -base64 32)`]);
  }
  return keys;
}
