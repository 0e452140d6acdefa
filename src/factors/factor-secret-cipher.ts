import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { SealedBox } from '../common/sealed-box.js';
import { factorsConfig, type FactorsConfig } from '../config/factors.config.js';
import { ServerKeysService } from '../keys/server-keys.service.js';

/** The server key generated when FACTOR_ENCRYPTION_KEY is unset (kept in server_keys, shared by every instance). */
export const GENERATED_FACTOR_KEY_NAME = 'factor-secret-encryption';

/**
 * Seals one-time-code secrets at rest, as signing keys are sealed: unlike a password, a TOTP
 * secret cannot be stored as a hash, since every check recomputes the code from it. Each value is
 * bound to its person's id (SealedBox), so a sealed secret copied onto another row does not open.
 */
@Injectable()
export class FactorSecretCipher implements OnApplicationBootstrap {
  constructor(
    @Inject(factorsConfig.KEY) private readonly config: FactorsConfig,
    private readonly serverKeys: ServerKeysService,
  ) {}

  /** Loads (or generates) the key at start, never first inside a transaction. */
  async onApplicationBootstrap(): Promise<void> {
    await this.sealedBox();
  }

  async seal(secret: string, userId: string): Promise<string> {
    return (await this.sealedBox()).seal(secret, `totp:${userId}`);
  }

  async open(sealed: string, userId: string): Promise<string | undefined> {
    return (await this.sealedBox()).open(sealed, `totp:${userId}`);
  }

  private sealedBox(): Promise<SealedBox> {
    return this.serverKeys.sealedBox(GENERATED_FACTOR_KEY_NAME, this.config.encryptionKeys);
  }
}
