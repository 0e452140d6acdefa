import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { SealedBox } from '../common/sealed-box.js';
import { macTokenConfig, type MacTokenConfig } from '../config/mac-token.config.js';
import { ServerKeysService } from '../keys/server-keys.service.js';

/** The server key generated when TOKEN_ENCRYPTION_KEY is unset (kept in server_keys, shared by every instance). */
export const GENERATED_MAC_KEY_NAME = 'mac-key-encryption';

/**
 * Seals MAC tokens' mac_keys at rest. Unlike a bearer token, a mac_key cannot be stored as a hash:
 * the resource server needs the key itself to recompute each request's MAC. Each value is bound to
 * its token's hash (SealedBox); TOKEN_ENCRYPTION_KEY can be rotated (newest first).
 */
@Injectable()
export class MacKeyCipher implements OnApplicationBootstrap {
  constructor(
    @Inject(macTokenConfig.KEY) private readonly config: MacTokenConfig,
    private readonly serverKeys: ServerKeysService,
  ) {}

  /**
   * Loads (or generates) the key at start, like the session key: never first inside a token
   * transaction, where a rollback would drop a generated key this process had already used.
   */
  async onApplicationBootstrap(): Promise<void> {
    await this.sealedBox();
  }

  async encrypt(plaintext: string, boundTo: string): Promise<string> {
    return (await this.sealedBox()).seal(plaintext, boundTo);
  }

  /** The plaintext, or undefined when the value is malformed, names a key we no longer hold, or was tampered with or moved. */
  async decrypt(sealed: string, boundTo: string): Promise<string | undefined> {
    return (await this.sealedBox()).open(sealed, boundTo);
  }

  /** Loaded once per process (ServerKeysService.sealedBox). */
  private sealedBox(): Promise<SealedBox> {
    return this.serverKeys.sealedBox(GENERATED_MAC_KEY_NAME, this.config.encryptionKeys);
  }
}
