import { Column, Entity, JoinColumn, OneToOne, PrimaryColumn, type Relation } from 'typeorm';
import { TIMESTAMP, UUID, UUID_LENGTH } from '../database/column-types.js';
import { User } from '../users/user.entity.js';

/**
 * A person's one-time-code authenticator (RFC 6238 TOTP: 30 s, 6 digits, SHA-1), at most one per
 * person. Only a confirmed enrolment is stored: the secret waits in the encrypted session cookie
 * until the person typed a first code. The secret is sealed (SealedBox, bound to the person's id),
 * never stored in the clear; last_used_step is the replay guard, moved forward by one conditional
 * UPDATE so that a code is accepted once on whichever instance it reaches.
 */
@Entity({ name: 'totp_factors' })
export class TotpFactor {
  /** The person's id: one authenticator each. */
  @PrimaryColumn({ name: 'user_id', type: UUID, length: UUID_LENGTH })
  userId: string;

  /** Deleting the person deletes the factor. */
  @OneToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: Relation<User>;

  /** The base32 secret, sealed (SealedBox `v1.…`). */
  @Column({ name: 'sealed_secret', type: 'varchar', length: 255 })
  sealedSecret: string;

  /** The time step (Unix time / 30) of the last accepted code; a code of this step or an earlier one is refused. */
  @Column({ name: 'last_used_step', type: 'integer', nullable: true })
  lastUsedStep: number | null;

  @Column({ name: 'created_at', type: TIMESTAMP })
  createdAt: Date;

  @Column({ name: 'last_used_at', type: TIMESTAMP, nullable: true })
  lastUsedAt: Date | null;
}
