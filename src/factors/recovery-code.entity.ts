import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { TIMESTAMP, UUID, UUID_LENGTH } from '../database/column-types.js';
import { User } from '../users/user.entity.js';

/**
 * One of a person's recovery codes: the way in when the authenticator is lost. Stored as the
 * SHA-256 of the code (80 random bits: a fast hash suffices), shown once; used once (used_at is
 * stamped by one conditional UPDATE). Making new codes deletes the old ones.
 */
@Entity({ name: 'recovery_codes' })
export class RecoveryCode {
  /** SHA-256 (hex) of the person's id and the normalised code. */
  @PrimaryColumn({ name: 'code_hash', type: 'varchar', length: 64 })
  codeHash: string;

  @Index()
  @Column({ name: 'user_id', type: UUID, length: UUID_LENGTH })
  userId: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: Relation<User>;

  @Column({ name: 'created_at', type: TIMESTAMP })
  createdAt: Date;

  @Column({ name: 'used_at', type: TIMESTAMP, nullable: true })
  usedAt: Date | null;
}
