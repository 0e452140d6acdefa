import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { TIMESTAMP, UUID, UUID_LENGTH } from '../database/column-types.js';

/**
 * One Idempotency-Key (draft-ietf-httpapi-idempotency-key-header-07) of one client for one person:
 * claimed by the first request that carries it (the primary key decides, whichever instance it
 * reaches), then holding that request's answer for IDEMPOTENCY_KEY_TTL_SECONDS. No foreign keys:
 * the row names its client and person only inside its hash, and is purged at its expiry.
 */
@Entity({ name: 'idempotency_keys' })
export class IdempotencyKey {
  /** SHA-256 (hex) of the client, the person and the key: the key itself is not kept. */
  @PrimaryColumn({ name: 'key_hash', type: 'varchar', length: 64 })
  keyHash: string;

  /** SHA-256 (hex) of the request (method, path, content type, body): the same key with another request is refused (§2.7). */
  @Column({ type: 'varchar', length: 64 })
  fingerprint: string;

  /** The request holding the key while it runs (a random id); null once its answer is kept. */
  @Column({ type: UUID, length: UUID_LENGTH, nullable: true })
  claim: string | null;

  /** Until when the claim holds: past it, a claim whose instance died is taken over by a retry. */
  @Column({ name: 'claimed_until', type: TIMESTAMP })
  claimedUntil: Date;

  /** The answer to replay (status, headers, body: the person's own item), as JSON; null while in flight. */
  @Column({ type: 'text', nullable: true })
  response: string | null;

  @Index()
  @Column({ name: 'expires_at', type: TIMESTAMP })
  expiresAt: Date;
}
