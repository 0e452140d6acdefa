import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { macTokenConfig, type MacTokenConfig } from '../config/mac-token.config.js';
import { ServerKeysService } from '../keys/server-keys.service.js';

/** The server key generated when TOKEN_ENCRYPTION_KEY is unset (kept in server_keys, shared by every instance). */
export const GENERATED_MAC_KEY_NAME = 'mac-key-encryption';
const FORMAT = 'v1';
const IV_BYTES = 12;

interface KeyRing {
  /** Encrypts new values. */
  current: { id: string; key: Buffer };
  /** Every key that may still decrypt, by id. */
  byId: ReadonlyMap<string, Buffer>;
}

/** A short, non-secret name for a key, stored beside each ciphertext so that rotation knows which key opens it. */
function keyId(key: Buffer): string {
  return createHash('sha256').update('latchkey mac-key-encryption key id').update(key).digest('base64url').slice(0, 8);
}

/**
 * Seals MAC tokens' mac_keys at rest. Unlike a bearer token, a mac_key cannot be stored as a hash:
 * the resource server needs the key itself to recompute each request's MAC. AES-256-GCM with a
 * random 96-bit IV per value; the additional data binds each ciphertext to its token's hash, so a
 * value copied onto another row does not decrypt. Stored as `v1.<key id>.<iv>.<ciphertext>.<tag>`
 * (base64url), so that TOKEN_ENCRYPTION_KEY can be rotated: new values use the first key, old
 * ones open with whichever key they name.
 */
@Injectable()
export class MacKeyCipher implements OnApplicationBootstrap {
  private ring?: Promise<KeyRing>;

  constructor(
    @Inject(macTokenConfig.KEY) private readonly config: MacTokenConfig,
    private readonly serverKeys: ServerKeysService,
  ) {}

  /**
   * Loads (or generates) the key at start, like the session key: never first inside a token
   * transaction, where a rollback would drop a generated key this process had already used.
   */
  async onApplicationBootstrap(): Promise<void> {
    await this.keys();
  }

  async encrypt(plaintext: string, boundTo: string): Promise<string> {
    const { current } = await this.keys();
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', current.key, iv);
    cipher.setAAD(Buffer.from(boundTo, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [FORMAT, current.id, iv.toString('base64url'), ciphertext.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
  }

  /** The plaintext, or undefined when the value is malformed, names a key we no longer hold, or was tampered with or moved. */
  async decrypt(sealed: string, boundTo: string): Promise<string | undefined> {
    const parts = sealed.split('.');
    if (parts.length !== 5 || parts[0] !== FORMAT) return undefined;
    const [, id, iv, ciphertext, tag] = parts;
    const key = (await this.keys()).byId.get(id);
    if (!key) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(boundTo, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }

  /** Loaded once per process. */
  private keys(): Promise<KeyRing> {
    this.ring ??= this.loadKeys().catch((error: unknown) => {
      this.ring = undefined;
      throw error;
    });
    return this.ring;
  }

  private async loadKeys(): Promise<KeyRing> {
    const keys = this.config.encryptionKeys.length > 0 ? this.config.encryptionKeys : [await this.serverKeys.getOrCreate(GENERATED_MAC_KEY_NAME)];
    const byId = new Map(keys.map((key) => [keyId(key), key] as const));
    return { current: { id: keyId(keys[0]), key: keys[0] }, byId };
  }
}
