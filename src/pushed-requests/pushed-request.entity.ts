import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Client } from '../clients/client.entity.js';
import { TIMESTAMP, UUID, UUID_LENGTH } from '../database/column-types.js';

/**
 * An authorization request a client pushed to /par (RFC 9126 §2), waiting for the browser to bring
 * its request_uri to /authorize. The request_uri carries a random reference; only its SHA-256 is
 * kept. It produces one authorization response: the code's INSERT and the UPDATE of used_at commit
 * together, guarded by `used_at IS NULL`, on whichever instance the browser reaches.
 */
@Entity({ name: 'pushed_authorization_requests' })
export class PushedAuthorizationRequest {
  @PrimaryColumn({ type: UUID, length: UUID_LENGTH })
  id: string;

  /** SHA-256 (hex) of the reference in the request_uri. */
  @Index({ unique: true })
  @Column({ name: 'reference_hash', type: 'varchar', length: 64 })
  referenceHash: string;

  @Column({ name: 'client_id', type: 'varchar', length: 64 })
  clientId: string;

  /** Deleting the client deletes its pending requests. */
  @ManyToOne(() => Client, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'client_id' })
  client?: Relation<Client>;

  /** The authorization request's parameters, as pushed: each a single string, but resource (RFC 8707), which may repeat. */
  @Column({ type: 'simple-json' })
  parameters: Record<string, string | string[]>;

  /** PAR_REQUEST_TTL_SECONDS after the push; once opened at /authorize, the end of the sign-in window. */
  @Index()
  @Column({ name: 'expires_at', type: TIMESTAMP })
  expiresAt: Date;

  /** When a browser first brought the request_uri to /authorize. */
  @Column({ name: 'opened_at', type: TIMESTAMP, nullable: true })
  openedAt: Date | null;

  /** When it produced its authorization response (a code, or an error sent to the client). */
  @Column({ name: 'used_at', type: TIMESTAMP, nullable: true })
  usedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: TIMESTAMP })
  createdAt: Date;
}
