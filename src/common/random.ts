import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

/**
 * Random bytes for the secrets and row ids the token endpoint makes on every request, drawn from
 * the CSPRNG a page at a time. Each call into it (randomBytes, or the WebCrypto getRandomValues
 * that uuid uses) costs about 3 µs of binding and locking for 16 or 32 bytes, four of them per
 * code exchange (bench/RESULTS.md); from a page it is a copy. Node's own randomUUID() draws its
 * randomness the same way (a cache of 128 UUIDs' worth). Every byte is handed out once: the read
 * position only moves forward, and a page is refilled, never reused, when it runs out.
 */
const PAGE_BYTES = 4096;
const page = Buffer.allocUnsafeSlow(PAGE_BYTES);
let position = PAGE_BYTES;

/** The offset of `size` fresh bytes in `page`, valid until the next call. */
function draw(size: number): number {
  if (size > PAGE_BYTES) throw new RangeError(`At most ${PAGE_BYTES} random bytes at a time`);
  if (position + size > PAGE_BYTES) {
    randomFillSync(page);
    position = 0;
  }
  const at = position;
  position += size;
  return at;
}

/** `size` random bytes from the CSPRNG, base64url (RFC 4648 §5): the random part of a secret. */
export function randomBase64url(size: number): string {
  const at = draw(size);
  return page.toString('base64url', at, at + size);
}

/** The millisecond and counter of the last id (RFC 9562 §6.2, method 1: a counter seeded at random each millisecond). */
let lastMsecs = -Infinity;
let sequence = 0;

/**
 * A UUIDv7 (RFC 9562 §5.7): time-ordered, so new rows append to their B-trees. Monotonic within
 * the process as uuid's own v7() is (its counter rules, reproduced here because uuid applies
 * them only to the randomness it draws itself); uuid lays out the bytes.
 */
export function uuidv7(): string {
  const at = draw(16);
  const random = page.subarray(at, at + 16);
  const now = Date.now();
  if (now > lastMsecs) {
    sequence = ((random[6] & 0x7f) << 24) | (random[7] << 16) | (random[8] << 8) | random[9];
    lastMsecs = now;
  } else {
    sequence = (sequence + 1) | 0;
    // The 32-bit counter ran over within one millisecond: borrow the next one, as uuid does.
    if (sequence === 0) lastMsecs++;
  }
  return v7({ random, msecs: lastMsecs, seq: sequence });
}
