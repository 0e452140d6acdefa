import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { TIMESTAMP, UUID, UUID_LENGTH } from '../database/column-types.js';
import { User } from '../users/user.entity.js';

/** What a link sent by email lets its holder do, once. */
export const LINK_PURPOSE = {
  Invite: 'invite',
  VerifyEmail: 'verify_email',
  ResetPassword: 'reset_password',
  ChangeEmail: 'change_email',
  Register: 'register',
} as const;
export type LinkPurpose = (typeof LINK_PURPOSE)[keyof typeof LINK_PURPOSE];

/**
 * A single-use link sent to an address (issue 46). Only the SHA-256 of its secret is kept (as for
 * tokens: a copy of the table opens nothing); it is used up by one conditional UPDATE, so that two
 * instances cannot both accept it. A row without a person is a forgotten-password request for an
 * address nobody has: written so that both answers cost the same, and useless (nothing is sent).
 */
@Entity({ name: 'email_links' })
export class EmailLink {
  @PrimaryColumn({ type: UUID, length: UUID_LENGTH })
  id: string;

  @Column({ type: 'varchar', length: 20 })
  purpose: LinkPurpose;

  @Column({ name: 'user_id', type: UUID, length: UUID_LENGTH, nullable: true })
  userId: string | null;

  @ManyToOne(() => User, { onDelete: 'CASCADE', nullable: true })
  @JoinColumn({ name: 'user_id' })
  user?: User;

  /** The address the link was sent to: a verification counts only while the person still has it; a change's new address. */
  @Column({ type: 'varchar', length: 254 })
  email: string;

  @Index({ unique: true })
  @Column({ name: 'token_hash', type: 'varchar', length: 64 })
  tokenHash: string;

  @Index()
  @Column({ name: 'expires_at', type: TIMESTAMP })
  expiresAt: Date;

  @Column({ name: 'used_at', type: TIMESTAMP, nullable: true })
  usedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: TIMESTAMP })
  createdAt: Date;
}
