import { Column, CreateDateColumn, Entity, Index, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import { TIMESTAMP, UUID, UUID_LENGTH } from '../database/column-types.js';

/** A resource owner (RFC 6749 §1.1) who logs in at the authorization endpoint. */
@Entity({ name: 'users' })
// LOWER(username) and LOWER(email), for the lookups that ignore case (UserStore); expression indexes,
// which the schema builder cannot describe: made by migration UsersLowercaseIndexes1766900100000.
@Index('IDX_users_lower_username', { synchronize: false })
@Index('IDX_users_lower_email', { synchronize: false })
export class User {
  @PrimaryColumn({ type: UUID, length: UUID_LENGTH })
  id: string;

  @Column({ type: 'varchar', length: 64, unique: true })
  username: string;

  /** argon2id PHC string; the password itself is never stored. */
  @Column({ name: 'password_hash', type: 'varchar', length: 255 })
  passwordHash: string;

  /** OpenID Connect Core §5.1 standard claims, released by scope at userinfo (§5.4); null when unknown. */
  @Column({ type: 'varchar', length: 254, nullable: true })
  email: string | null;

  /** Whether an administrator vouched for the address; a changed address is unverified again. */
  @Column({ name: 'email_verified', type: 'boolean', default: false })
  emailVerified: boolean;

  @Column({ type: 'varchar', length: 200, nullable: true })
  name: string | null;

  @Column({ name: 'given_name', type: 'varchar', length: 100, nullable: true })
  givenName: string | null;

  @Column({ name: 'family_name', type: 'varchar', length: 100, nullable: true })
  familyName: string | null;

  /** An administrator requires a second factor of this person (users:update --require-mfa). */
  @Column({ name: 'require_mfa', type: 'boolean', default: false })
  requireMfa: boolean;

  /**
   * False while the person is deactivated (SCIM `active`, RFC 7643 §4.1.1; `users:deactivate`):
   * every sign-in is refused and nothing is issued for them until they are reactivated.
   */
  @Column({ type: 'boolean', default: true })
  active: boolean;

  @CreateDateColumn({ name: 'created_at', type: TIMESTAMP })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: TIMESTAMP })
  updatedAt: Date;
}
