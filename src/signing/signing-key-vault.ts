import type { webcrypto } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { calculateJwkThumbprint, importJWK, type JWK } from 'jose';
import type { AuditActor } from '../audit/audit-actor.js';
import { AuditService } from '../audit/audit.service.js';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/domain-error.js';
import type { SealedBox } from '../common/sealed-box.js';
import { openIdConfig, type OpenIdConfig } from '../config/openid.config.js';
import { Transactions } from '../database/transactions.js';
import { ServerKeysService } from '../keys/server-keys.service.js';
import { generateSigningKeyPair, SIGNING_ALGORITHMS, type SigningAlgorithm } from './signing-algorithms.js';
import { SigningKey } from './signing-key.entity.js';
import { SigningKeyStore } from './signing-key.store.js';

/** The server key generated when SIGNING_KEY_ENCRYPTION_KEY is unset (kept in server_keys). */
export const GENERATED_SIGNING_KEY_ENCRYPTION_NAME = 'signing-key-encryption';

/** A published key, ready to use: the private half opened and imported once. */
export interface LoadedSigningKey {
  kid: string;
  alg: SigningAlgorithm;
  activatesAt: Date;
  publicJwk: JWK;
  /** Undefined when the sealed private half does not open (its encryption key was removed): published, never used to sign. */
  privateKey?: webcrypto.CryptoKey;
}

/** What `keys:list` and `keys:rotate` print: never the private half. */
export interface SigningKeyView {
  kid: string;
  alg: string;
  generation: number;
  created_at: string;
  activates_at: string;
  published_until: string | null;
  state: 'next' | 'signing' | 'retiring' | 'retired';
}

/**
 * Each key's place in its algorithm's rotation at `at`: next (published, not signing yet), signing
 * (the newest active key that is still published), retiring (replaced, published until the tokens
 * it signed expire), retired. keys:list prints it; doctor checks it.
 */
export function signingKeyViews(keys: readonly SigningKey[], at: Date): SigningKeyView[] {
  const now = at.getTime();
  const signing = new Map<string, string>();
  for (const key of keys) if (key.activatesAt.getTime() <= now && (key.publishedUntil === null || key.publishedUntil.getTime() > now)) signing.set(key.alg, key.kid);
  return keys.map((key) => ({
    kid: key.kid,
    alg: key.alg,
    generation: key.generation,
    created_at: key.createdAt.toISOString(),
    activates_at: key.activatesAt.toISOString(),
    published_until: key.publishedUntil?.toISOString() ?? null,
    state: key.activatesAt.getTime() > now ? 'next' : signing.get(key.alg) === key.kid ? 'signing' : key.publishedUntil !== null && key.publishedUntil.getTime() <= now ? 'retired' : 'retiring',
  }));
}

/**
 * Makes, seals and stores signing keys, and loads them back. Key pairs are generated outside any
 * transaction (it takes a while and lets the event loop turn, which a group-commit unit of work must not).
 */
@Injectable()
export class SigningKeyVault {
  /** Imported private keys by kid, kept across reloads: importing is done once per key and process. */
  private readonly imported = new Map<string, webcrypto.CryptoKey | undefined>();

  constructor(
    private readonly store: SigningKeyStore,
    private readonly serverKeys: ServerKeysService,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    @Inject(openIdConfig.KEY) private readonly config: OpenIdConfig,
  ) {}

  /**
   * First start: one key per algorithm, signing at once (no token was signed before, so no cached
   * JWKS lacks it). Instances starting together race; generation 1 is unique per algorithm, so one
   * insert wins and every instance then loads the winner.
   */
  async ensureInitialKeys(): Promise<void> {
    const existing = new Set((await this.store.all()).map((key) => key.alg));
    for (const alg of SIGNING_ALGORITHMS) {
      if (!existing.has(alg)) await this.store.insertIfAbsent(await this.newKey(alg, 1, this.clock.now()));
    }
  }

  /**
   * RFC-less but standard practice (Core §10.1.1): the new key is published now and signs one
   * publish lead later; the keys it replaces stay published until the last token they may sign
   * (up to its activation) has expired.
   */
  async rotate(alg: SigningAlgorithm, actor: AuditActor): Promise<SigningKey> {
    const activatesAt = this.clock.inSeconds(this.config.publishLeadSeconds);
    const draft = await this.newKey(alg, 0, activatesAt);
    const retireAt = new Date(activatesAt.getTime() + this.config.idTokenTtlSeconds * 1000);
    return this.transactions.run(async (manager) => {
      const latest = await this.store.latestGeneration(alg, manager);
      const key = { ...draft, generation: (latest?.generation ?? 0) + 1 };
      if (!(await this.store.insertIfAbsent(key, manager))) throw new DomainError('rotation_conflict', `Another rotation of ${alg} ran at the same time; rotate again if you want one more`);
      await this.store.retireOthers(alg, key.kid, retireAt, manager);
      await this.audit.record({ actor, action: 'signing_key.rotated', subject: `signing_key:${key.kid}`, details: { alg, generation: key.generation, activates_at: activatesAt.toISOString() } }, manager);
      return key;
    });
  }

  /** `keys:rotate` and POST /admin/api/v1/keys/rotation: a new key for each algorithm named, in turn; the new keys as keys:list shows them. */
  async rotateEach(algs: readonly SigningAlgorithm[], actor: AuditActor): Promise<SigningKeyView[]> {
    const rotated: string[] = [];
    for (const alg of algs) rotated.push((await this.rotate(alg, actor)).kid);
    return (await this.list()).filter((key) => rotated.includes(key.kid));
  }

  /** The published keys, private halves opened (each imported once per process). */
  async loadPublished(): Promise<LoadedSigningKey[]> {
    const box = await this.sealedBox();
    const rows = await this.store.published(this.clock.now());
    for (const row of rows) {
      if (this.imported.has(row.kid)) continue;
      const jwk = box.open(row.privateJwk, row.kid);
      // A non-extractable webcrypto.CryptoKey: jose signs with it through WebCrypto, without importing per token.
      this.imported.set(row.kid, jwk === undefined ? undefined : ((await importJWK(JSON.parse(jwk) as JWK, row.alg, { extractable: false })) as webcrypto.CryptoKey));
    }
    return rows.map((row) => ({ kid: row.kid, alg: row.alg as SigningAlgorithm, activatesAt: row.activatesAt, publicJwk: JSON.parse(row.publicJwk) as JWK, privateKey: this.imported.get(row.kid) }));
  }

  async list(): Promise<SigningKeyView[]> {
    return signingKeyViews(await this.store.all(), this.clock.now());
  }

  private async newKey(alg: SigningAlgorithm, generation: number, activatesAt: Date): Promise<SigningKey> {
    const { publicKey, privateKey } = await generateSigningKeyPair(alg);
    const publicJwk = publicKey.export({ format: 'jwk' }) as JWK;
    const kid = await calculateJwkThumbprint(publicJwk, 'sha256');
    const box = await this.sealedBox();
    return {
      kid,
      alg,
      generation,
      publicJwk: JSON.stringify({ ...publicJwk, kid, alg, use: 'sig' }),
      privateJwk: box.seal(JSON.stringify(privateKey.export({ format: 'jwk' })), kid),
      createdAt: this.clock.now(),
      activatesAt,
      publishedUntil: null,
    };
  }

  private sealedBox(): Promise<SealedBox> {
    return this.serverKeys.sealedBox(GENERATED_SIGNING_KEY_ENCRYPTION_NAME, this.config.signingKeyEncryptionKeys);
  }
}
