import type { webcrypto } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { openIdConfig, type OpenIdConfig } from '../config/openid.config.js';
import type { SigningAlgorithm } from './signing-algorithms.js';
import { SigningKeyVault, type LoadedSigningKey } from './signing-key-vault.js';

/** The key that signs now for one algorithm. */
export interface Signer {
  kid: string;
  alg: SigningAlgorithm;
  privateKey: webcrypto.CryptoKey;
}

interface Ring {
  keys: LoadedSigningKey[];
  /** The JWKS document (RFC 7517 §5), serialized once per load. */
  jwks: string;
}

/** Thrown when no usable key signs for an algorithm: a configuration fault (the encryption key that sealed every key is gone). */
export class NoSigningKeyError extends Error {}

/**
 * Each instance's in-memory copy of the published keys: what signs now, and the JWKS. Loaded at
 * start and reloaded by a timer every SIGNING_KEY_RELOAD_SECONDS (never on a request's path, and
 * whether or not requests come), so a rotation made by the CLI or another instance reaches every
 * instance well within the publish lead, and a key activates on every instance by the clock.
 */
@Injectable()
export class SigningKeyRing implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(SigningKeyRing.name);
  private ring?: Ring;
  private reloading?: Promise<void>;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly vault: SigningKeyVault,
    private readonly clock: Clock,
    @Inject(openIdConfig.KEY) private readonly config: OpenIdConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.vault.ensureInitialKeys();
    await this.reload();
    this.timer = setInterval(() => {
      // A failed reload keeps the keys it has and is tried again at the next tick.
      this.reload().catch((error: unknown) => this.logger.warn(`Reloading the signing keys failed: ${error instanceof Error ? error.message : String(error)}`));
    }, this.config.reloadSeconds * 1000);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** The key that signs now for `alg`: the published one with the latest activation that has passed. */
  signer(alg: SigningAlgorithm): Signer {
    const ring = this.current();
    const now = this.clock.now().getTime();
    let chosen: LoadedSigningKey | undefined;
    for (const key of ring.keys) {
      if (key.alg === alg && key.privateKey && key.activatesAt.getTime() <= now && (!chosen || key.activatesAt > chosen.activatesAt)) chosen = key;
    }
    if (!chosen?.privateKey) throw new NoSigningKeyError(`No usable ${alg} signing key: check SIGNING_KEY_ENCRYPTION_KEY`);
    return { kid: chosen.kid, alg, privateKey: chosen.privateKey };
  }

  /** The JWKS (RFC 7517 §5) as served at jwks_uri: every published key, the next ones included. */
  jwks(): string {
    return this.current().jwks;
  }

  /** Loads the published keys now (after a rotation made by this process, so that it shows at once). */
  reload(): Promise<void> {
    this.reloading ??= this.vault
      .loadPublished()
      .then((keys) => {
        this.ring = { keys, jwks: JSON.stringify({ keys: keys.map((key) => key.publicJwk) }) };
      })
      .finally(() => {
        this.reloading = undefined;
      });
    return this.reloading;
  }

  private current(): Ring {
    if (!this.ring) throw new NoSigningKeyError('The signing keys are not loaded yet');
    return this.ring;
  }
}
