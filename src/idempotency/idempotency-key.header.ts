import { ApiError } from '../http/api-error.js';

/** The request header (draft-ietf-httpapi-idempotency-key-header-07 §2). */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
/** Longer keys are refused: a UUID is 36 characters, and the key is stored only as part of a hash anyway. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** RFC 8941 §3.3.3 sf-string: DQUOTE *( unescaped / "\" ( DQUOTE / "\" ) ) DQUOTE, unescaped being %x20-21 / %x23-5B / %x5D-7E. */
const SF_STRING = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/;
/** What clients send in practice besides the draft's form: one bare run of visible ASCII, no quote, backslash or comma. */
const BARE = /^[\x21\x23-\x2b\x2d-\x5b\x5d-\x7e]+$/;

/**
 * The Idempotency-Key of a request, or undefined when it sent none. The draft (§2.1) makes the
 * field an Item Structured Field whose value MUST be a String (RFC 8941 §3.3.3), i.e. quoted:
 * `Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"`. Many clients send the bare value
 * (Stripe's convention); both are accepted and name the same key (`"abc"` and `abc` are one key).
 * Empty, too long, two fields (joined by a comma), parameters or anything else: 400 (§2.7).
 */
export function idempotencyKeyOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  const field = headers[IDEMPOTENCY_KEY_HEADER];
  if (field === undefined) return undefined;
  const value = (Array.isArray(field) ? field.join(', ') : field).trim();
  const quoted = SF_STRING.exec(value);
  const key = quoted ? quoted[1].replace(/\\(["\\])/g, '$1') : BARE.test(value) ? value : undefined;
  if (key === undefined || key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new ApiError(400, `The Idempotency-Key header must be one string of 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters, quoted ("…") or bare`);
  }
  return key;
}
