import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Client } from '../clients/client.entity.js';
import { TIMESTAMP, UUID, UUID_LENGTH } from '../database/column-types.js';

export const DeliveryStatus = { Pending: 'pending', Delivered: 'delivered', Failed: 'failed' } as const;
export type DeliveryStatus = (typeof DeliveryStatus)[keyof typeof DeliveryStatus];

/**
 * A back-channel logout notification owed to a client (OpenID Connect Back-Channel Logout 1.0),
 * written in the transaction that ended the session (an outbox), sent by whichever instance claims
 * it first, retried with backoff, and kept as the record of what was delivered or given up on.
 */
@Entity({ name: 'logout_deliveries' })
@Index(['status', 'nextAttemptAt'])
export class LogoutDelivery {
  @PrimaryColumn({ type: UUID, length: UUID_LENGTH })
  id: string;

  @Column({ name: 'client_id', type: 'varchar', length: 64 })
  clientId: string;

  @ManyToOne(() => Client, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'client_id' })
  client?: Relation<Client>;

  /** The person as this client knows them (public or pairwise sub); not a foreign key, so that a deleted person is still signed out. */
  @Column({ type: 'varchar', length: 64 })
  subject: string;

  /** The ended session's public id. */
  @Column({ type: 'varchar', length: 64 })
  sid: string;

  @Column({ type: 'varchar', length: 16 })
  status: DeliveryStatus;

  @Column({ type: 'integer', default: 0 })
  attempts: number;

  /** When it may be tried next; claiming it moves this forward (a lease), so two instances never send it at once. */
  @Column({ name: 'next_attempt_at', type: TIMESTAMP })
  nextAttemptAt: Date;

  @Column({ name: 'last_error', type: 'varchar', length: 500, nullable: true })
  lastError: string | null;

  @CreateDateColumn({ name: 'created_at', type: TIMESTAMP })
  createdAt: Date;

  @Column({ name: 'delivered_at', type: TIMESTAMP, nullable: true })
  deliveredAt: Date | null;
}
