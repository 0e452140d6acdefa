import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const FORMAT = 'v1';
const IV_BYTES = 12;
/** The full 128-bit GCM tag, and no shorter one (NIST SP 800-38D §5.2.1.2: one tag length per key). */
const TAG_BYTES = 16;

/**
 * Seals values that must be recovered (unlike secrets, which are stored as hashes): MAC tokens'
 * mac_keys, signing keys' private halves. AES-256-GCM with a random 96-bit IV per value; the
 * additional data binds each ciphertext to its row (`boundTo`), so a value copied onto another row
 * does not open. Stored as `v1.<key id>.<iv>.<ciphertext>.<tag>` (base64url), so that the
 * encryption key can be rotated: new values use the first key, old ones open with the key they name.
 */
export class SealedBox {
  private readonly current: { id: string; key: Buffer };
  private readonly byId: ReadonlyMap<string, Buffer>;

  /** `purpose` names what the keys protect; it goes into each key id, so two boxes never mistake each other's keys. `keys`: newest first. */
  constructor(purpose: string, keys: readonly Buffer[]) {
    if (keys.length === 0) throw new Error(`SealedBox(${purpose}) needs at least one key`);
    const id = (key: Buffer): string => createHash('sha256').update(`latchkey ${purpose} key id`).update(key).digest('base64url').slice(0, 8);
    this.current = { id: id(keys[0]), key: keys[0] };
    this.byId = new Map(keys.map((key) => [id(key), key] as const));
  }

  seal(plaintext: string, boundTo: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(Buffer.from(boundTo, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [FORMAT, this.current.id, iv.toString('base64url'), ciphertext.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
  }

  /** The plaintext, or undefined when the value is malformed, names a key this box does not hold, or was tampered with or moved. */
  open(sealed: string, boundTo: string): string | undefined {
    const parts = sealed.split('.');
    if (parts.length !== 5 || parts[0] !== FORMAT) return undefined;
    const [, id, iv, ciphertext, tag] = parts;
    const key = this.byId.get(id);
    if (!key) return undefined;
    const ivBytes = Buffer.from(iv, 'base64url');
    const tagBytes = Buffer.from(tag, 'base64url');
    // Without the length fixed, Node checks only as many tag bytes as it is given: a tag cut to
    // 4 bytes would make a forgery a 32-bit guess.
    if (ivBytes.length !== IV_BYTES || tagBytes.length !== TAG_BYTES) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, ivBytes, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(boundTo, 'utf8'));
      decipher.setAuthTag(tagBytes);
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}
