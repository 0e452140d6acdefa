import { validate, version } from 'uuid';
import { randomBase64url, uuidv7 } from './random.js';

/** The 48-bit Unix milliseconds at the front of a UUIDv7 (RFC 9562 §5.7). */
function millisecondsOf(id: string): number {
  return parseInt(id.replace(/-/g, '').slice(0, 12), 16);
}

describe('random', () => {
  describe(uuidv7.name, () => {
    it('makes RFC 9562 version 7 UUIDs stamped with the current millisecond', () => {
      const before = Date.now();
      const id = uuidv7();
      const after = Date.now();
      expect(validate(id)).toBe(true);
      expect(version(id)).toBe(7);
      // Variant bits 10 (RFC 9562 §4.1).
      expect(id[19]).toMatch(/[89ab]/);
      expect(millisecondsOf(id)).toBeGreaterThanOrEqual(before);
      expect(millisecondsOf(id)).toBeLessThanOrEqual(after + 1);
    });

    it('is strictly increasing within a burst, across many pages of randomness, so rows append in order', () => {
      // 20,000 ids draw 320 KB: eighty refills of the page.
      const ids = Array.from({ length: 20_000 }, () => uuidv7());
      for (let i = 1; i < ids.length; i++) expect(ids[i] > ids[i - 1]).toBe(true);
      expect(new Set(ids).size).toBe(ids.length);
    });

    it('keeps the random tail random: the last 8 characters differ between consecutive ids', () => {
      const tails = Array.from({ length: 500 }, () => uuidv7().slice(-8));
      expect(new Set(tails).size).toBeGreaterThan(490);
    });
  });

  describe(randomBase64url.name, () => {
    it('encodes exactly the bytes asked for', () => {
      for (const size of [1, 16, 32, 100]) {
        const value = randomBase64url(size);
        expect(value).toMatch(/^[A-Za-z0-9_-]+$/);
        expect(Buffer.from(value, 'base64url')).toHaveLength(size);
      }
    });

    it('never hands out the same bytes twice, also across refills and between secrets and ids', () => {
      const seen = new Set<string>();
      for (let i = 0; i < 5_000; i++) {
        seen.add(randomBase64url(32));
        // An id between two secrets moves the read position by 16 bytes, so secrets straddle page ends.
        uuidv7();
      }
      expect(seen.size).toBe(5_000);
    });

    it('refuses more than a page at a time instead of repeating bytes', () => {
      expect(() => randomBase64url(4097)).toThrow(RangeError);
      expect(Buffer.from(randomBase64url(4096), 'base64url')).toHaveLength(4096);
    });
  });
});
