import { randomBytes } from 'node:crypto';
import { SealedBox } from './sealed-box.js';

/**
 * SealedBox: AES-256-GCM (NIST SP 800-38D) with the row a value belongs to as additional
 * authenticated data, stored as `v1.<key id>.<iv>.<ciphertext>.<tag>` (base64url).
 */
const PURPOSE = 'signing-key-encryption';
const ROW = 'kid-A';
const PLAINTEXT = JSON.stringify({ kty: 'OKP', crv: 'Ed25519', d: 'private-part', x: 'public-part' });

function parts(sealed: string): { format: string; keyId: string; iv: Buffer; ciphertext: Buffer; tag: Buffer } {
  const [format, keyId, iv, ciphertext, tag] = sealed.split('.');
  return { format, keyId, iv: Buffer.from(iv, 'base64url'), ciphertext: Buffer.from(ciphertext, 'base64url'), tag: Buffer.from(tag, 'base64url') };
}

function join(p: ReturnType<typeof parts>): string {
  return [p.format, p.keyId, p.iv.toString('base64url'), p.ciphertext.toString('base64url'), p.tag.toString('base64url')].join('.');
}

/** A copy of `bytes` with one bit of byte `index` flipped. */
function flipped(bytes: Buffer, index = 0): Buffer {
  const copy = Buffer.from(bytes);
  copy[index] ^= 0x01;
  return copy;
}

describe(SealedBox.name, () => {
  const key = randomBytes(32);
  let box: SealedBox;
  let sealed: string;

  beforeEach(() => {
    box = new SealedBox(PURPOSE, [key]);
    sealed = box.seal(PLAINTEXT, ROW);
  });

  describe('sealing and opening', () => {
    it('opens what it sealed, for the same row', () => {
      expect(box.open(sealed, ROW)).toBe(PLAINTEXT);
    });

    it('stores v1, a key id, a 96-bit IV, the ciphertext and a 128-bit tag, none of it the plaintext', () => {
      const p = parts(sealed);
      expect(sealed.split('.')).toHaveLength(5);
      expect(p.format).toBe('v1');
      expect(p.keyId).toMatch(/^[A-Za-z0-9_-]{8}$/);
      expect(p.iv).toHaveLength(12);
      expect(p.tag).toHaveLength(16);
      expect(p.ciphertext).toHaveLength(Buffer.byteLength(PLAINTEXT));
      expect(sealed).not.toContain('private-part');
      expect(p.ciphertext.toString('utf8')).not.toContain('private-part');
    });

    it('uses a fresh IV per value: the same plaintext sealed twice differs, and both open', () => {
      const again = box.seal(PLAINTEXT, ROW);
      expect(again).not.toBe(sealed);
      expect(parts(again).iv.equals(parts(sealed).iv)).toBe(false);
      expect(box.open(again, ROW)).toBe(PLAINTEXT);
    });

    it('seals the empty string and non-ASCII text faithfully', () => {
      expect(box.open(box.seal('', ROW), ROW)).toBe('');
      expect(box.open(box.seal('clé · 鍵 · 🔑', ROW), ROW)).toBe('clé · 鍵 · 🔑');
    });
  });

  describe('binding to a row (the additional authenticated data)', () => {
    it.each([
      ['another kid', 'kid-B'],
      ['a prefix of the kid', 'kid-'],
      ['the kid with a suffix', `${ROW}x`],
      ['an empty boundTo', ''],
    ])('does not open for %s', (_case, other) => {
      expect(box.open(sealed, other)).toBeUndefined();
    });
  });

  describe('tampering (GCM authenticates the IV, the ciphertext and the additional data)', () => {
    it.each([
      ['the ciphertext', (p: ReturnType<typeof parts>) => ({ ...p, ciphertext: flipped(p.ciphertext, p.ciphertext.length - 1) })],
      ['the tag', (p: ReturnType<typeof parts>) => ({ ...p, tag: flipped(p.tag, 15) })],
      ['the IV', (p: ReturnType<typeof parts>) => ({ ...p, iv: flipped(p.iv) })],
      ['the ciphertext, cut short', (p: ReturnType<typeof parts>) => ({ ...p, ciphertext: p.ciphertext.subarray(0, -1) })],
      ['the tag, replaced by zeros', (p: ReturnType<typeof parts>) => ({ ...p, tag: Buffer.alloc(16) })],
    ])('a value with %s changed does not open', (_case, tamper) => {
      const tampered = join(tamper(parts(sealed)));
      expect(tampered).not.toBe(sealed);
      expect(box.open(tampered, ROW)).toBeUndefined();
    });

    it.each([12, 8, 4])('a tag cut to its first %i bytes does not open (SP 800-38D §5.2.1.2: the tag length is fixed per key, here 128 bits)', (bytes) => {
      const p = parts(sealed);
      expect(box.open(join({ ...p, tag: p.tag.subarray(0, bytes) }), ROW)).toBeUndefined();
    });
  });

  describe('rotating the encryption key (keys newest first)', () => {
    const newer = randomBytes(32);

    it('opens a value sealed with the older key once the newer key comes first', () => {
      expect(new SealedBox(PURPOSE, [newer, key]).open(sealed, ROW)).toBe(PLAINTEXT);
    });

    it('seals new values with the newest key: the key id changes, and a box without the newer key cannot open them', () => {
      const rotated = new SealedBox(PURPOSE, [newer, key]);
      const resealed = rotated.seal(PLAINTEXT, ROW);
      expect(parts(resealed).keyId).not.toBe(parts(sealed).keyId);
      expect(parts(rotated.seal('other', ROW)).keyId).toBe(parts(resealed).keyId);
      expect(new SealedBox(PURPOSE, [newer]).open(resealed, ROW)).toBe(PLAINTEXT);
      expect(box.open(resealed, ROW)).toBeUndefined();
    });

    it('no longer opens values of a key that was removed from the list', () => {
      expect(new SealedBox(PURPOSE, [newer]).open(sealed, ROW)).toBeUndefined();
    });

    it('derives the key id from the key alone: the same key has the same id wherever it stands in the list', () => {
      const last = new SealedBox(PURPOSE, [key, newer]).seal(PLAINTEXT, ROW);
      expect(parts(last).keyId).toBe(parts(sealed).keyId);
    });
  });

  describe('purposes', () => {
    it('a box for another purpose with the same key bytes names the key differently and does not open the value', () => {
      const other = new SealedBox('mac-key-encryption', [key]);
      expect(parts(other.seal(PLAINTEXT, ROW)).keyId).not.toBe(parts(sealed).keyId);
      expect(other.open(sealed, ROW)).toBeUndefined();
      expect(box.open(other.seal(PLAINTEXT, ROW), ROW)).toBeUndefined();
    });
  });

  describe('malformed values', () => {
    it.each([
      ['the empty string', () => ''],
      ['plain JSON', () => PLAINTEXT],
      ['only the format', () => 'v1'],
      ['four parts', () => sealed.split('.').slice(0, 4).join('.')],
      ['six parts', () => `${sealed}.x`],
      ['another format version', () => sealed.replace(/^v1\./, 'v2.')],
      ['an unknown key id', () => sealed.replace(/^v1\.[^.]+\./, 'v1.AAAAAAAA.')],
      ['an empty IV', () => join({ ...parts(sealed), iv: Buffer.alloc(0) })],
      ['an empty tag', () => join({ ...parts(sealed), tag: Buffer.alloc(0) })],
      ['dots only', () => '....'],
    ])('%s does not open, and does not throw', (_case, value) => {
      expect(box.open(value(), ROW)).toBeUndefined();
    });
  });

  it('refuses to be built without a key', () => {
    expect(() => new SealedBox(PURPOSE, [])).toThrow(/at least one key/);
  });
});
