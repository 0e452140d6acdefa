import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Client } from '../clients/client.entity.js';
import { TIMESTAMP, UUID, UUID_LENGTH } from '../database/column-types.js';
import { User } from '../users/user.entity.js';

/** Where a device authorization stands (RFC 8628 §3.3 to §3.5). */
export const DeviceAuthorizationStatus = {
  /** Waiting for the person at the verification page. */
  Pending: 'pending',
  /** The person allowed it: the next poll gets the tokens. */
  Approved: 'approved',
  /** The person denied it, or what approved it ended (sign-out, consent withdrawn) before the device polled. */
  Denied: 'denied',
  /** The device got its tokens: the device_code is spent. */
  Redeemed: 'redeemed',
} as const;
export type DeviceAuthorizationStatus = (typeof DeviceAuthorizationStatus)[keyof typeof DeviceAuthorizationStatus];

/**
 * A device authorization request (RFC 8628 §3.1): what a device without a browser asked for, and
 * the person's answer at the verification page. Neither code is kept: the device_code and the
 * normalized user_code are found by their SHA-256 (§5.2, §6.1). Each row is decided once and
 * redeemed once, by conditional UPDATEs on its status, on whichever instance the request reaches.
 */
@Entity({ name: 'device_authorizations' })
export class DeviceAuthorization {
  /** UUIDv7; the family id of the tokens issued from it. */
  @PrimaryColumn({ type: UUID, length: UUID_LENGTH })
  id: string;

  /** SHA-256 (hex) of the device_code. */
  @Index({ unique: true })
  @Column({ name: 'device_code_hash', type: 'varchar', length: 64 })
  deviceCodeHash: string;

  /** SHA-256 (hex) of the user_code without its dash, upper-cased (user-code.ts). */
  @Index({ unique: true })
  @Column({ name: 'user_code_hash', type: 'varchar', length: 64 })
  userCodeHash: string;

  @Column({ name: 'client_id', type: 'varchar', length: 64 })
  clientId: string;

  /** Deleting the client deletes its pending requests. */
  @ManyToOne(() => Client, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'client_id' })
  client?: Relation<Client>;

  /** The scope asked for (§3.1), space-separated. */
  @Column({ type: 'text' })
  scope: string;

  @Column({ type: 'varchar', length: 16 })
  status: DeviceAuthorizationStatus;

  /** Who decided, once someone did. */
  @Index()
  @Column({ name: 'user_id', type: UUID, length: UUID_LENGTH, nullable: true })
  userId: string | null;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: Relation<User>;

  /** OpenID Connect: when the person who approved signed in, and how (RFC 8176 amr, space-separated). */
  @Column({ name: 'auth_time', type: TIMESTAMP, nullable: true })
  authTime: Date | null;

  @Column({ type: 'varchar', length: 64, nullable: true })
  amr: string | null;

  /** The public id of the sign-in session that approved: its end revokes what the device obtained. */
  @Column({ type: 'varchar', length: 64, nullable: true })
  sid: string | null;

  /** §3.2 interval, grown by 5 s at each slow_down (§3.5). */
  @Column({ name: 'interval_seconds', type: 'integer' })
  intervalSeconds: number;

  /** When the device last polled while the request was pending: a poll sooner than the interval after it is told to slow down. */
  @Column({ name: 'last_polled_at', type: TIMESTAMP, nullable: true })
  lastPolledAt: Date | null;

  @Index()
  @Column({ name: 'expires_at', type: TIMESTAMP })
  expiresAt: Date;

  @Column({ name: 'decided_at', type: TIMESTAMP, nullable: true })
  decidedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: TIMESTAMP })
  createdAt: Date;
}
