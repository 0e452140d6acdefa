import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { TIMESTAMP, UUID, UUID_LENGTH } from '../database/column-types.js';
import { User } from '../users/user.entity.js';

/** WebAuthn's signature counter is a 32-bit unsigned integer: bigint on PostgreSQL, read back as a number. */
const COUNTER = { to: (value: number) => value, from: (value: string | number) => Number(value) };

/**
 * A passkey: a discoverable WebAuthn credential (WebAuthn Level 3 §6.4.1) a person registered from
 * the account page. Only its public key is kept; the private key never leaves the authenticator.
 */
@Entity({ name: 'passkeys' })
export class Passkey {
  @PrimaryColumn({ type: UUID, length: UUID_LENGTH })
  id: string;

  @Index()
  @Column({ name: 'user_id', type: UUID, length: UUID_LENGTH })
  userId: string;

  /** Deleting the person deletes their passkeys. */
  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: Relation<User>;

  /** The credential ID (base64url), as the authenticator returns it at sign-in: how a sign-in finds its passkey. */
  @Index({ unique: true })
  @Column({ name: 'credential_id', type: 'varchar', length: 1400 })
  credentialId: string;

  /** The credential public key, COSE_Key (RFC 9053) as base64url. */
  @Column({ name: 'public_key', type: 'text' })
  publicKey: string;

  /** The last signature counter seen (WebAuthn §6.1.1); 0 for authenticators that keep none. */
  @Column({ type: 'bigint', default: 0, transformer: COUNTER })
  counter: number;

  /** AuthenticatorTransport hints (usb, nfc, ble, hybrid, internal), for the browser's prompts. */
  @Column({ type: 'simple-json' })
  transports: string[];

  /** The BE flag (WebAuthn §6.1): the credential may be synced to other devices (a "synced passkey"). */
  @Column({ name: 'backup_eligible', type: 'boolean', default: false })
  backupEligible: boolean;

  /** The BS flag, as of the last use: the credential is backed up now. */
  @Column({ name: 'backed_up', type: 'boolean', default: false })
  backedUp: boolean;

  /** The name the person gave it on the account page. */
  @Column({ type: 'varchar', length: 64 })
  name: string;

  @CreateDateColumn({ name: 'created_at', type: TIMESTAMP })
  createdAt: Date;

  @Column({ name: 'last_used_at', type: TIMESTAMP, nullable: true })
  lastUsedAt: Date | null;

  /**
   * When a copy of this passkey was detected (WebAuthn §6.1.1: a signature counter that did not
   * grow). The copy and the original hold the same key and nothing tells them apart, so from then
   * on it signs nobody in; it stays listed, blocked, until the person or an administrator removes it.
   */
  @Column({ name: 'cloned_at', type: TIMESTAMP, nullable: true })
  clonedAt: Date | null;
}
