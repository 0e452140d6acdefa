import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { TIMESTAMP, UUID, UUID_LENGTH } from '../database/column-types.js';
import { User } from '../users/user.entity.js';
import { IdentityProvider } from './identity-provider.entity.js';

/**
 * A person's identity at an upstream provider, linked to their account here. Keyed by the provider
 * and the upstream's stable subject (OpenID Connect Core §2 `sub`, unique per issuer; a SAML
 * persistent NameID or the configured attribute), never by an email address, which the upstream
 * may let a person change or may not have verified.
 */
@Entity({ name: 'upstream_links' })
export class UpstreamLink {
  @PrimaryColumn({ name: 'idp_id', type: 'varchar', length: 64 })
  idpId: string;

  @PrimaryColumn({ type: 'varchar', length: 255 })
  subject: string;

  @ManyToOne(() => IdentityProvider, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'idp_id' })
  idp?: Relation<IdentityProvider>;

  @Index()
  @Column({ name: 'user_id', type: UUID, length: UUID_LENGTH })
  userId: string;

  /** Deleting the person deletes their links. */
  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: Relation<User>;

  /** How the link was made: `created` (just-in-time account), `linked` (the person, signed in locally) or `admin` (users:link). */
  @Column({ type: 'varchar', length: 16 })
  origin: string;

  @Column({ name: 'created_at', type: TIMESTAMP })
  createdAt: Date;

  @Column({ name: 'last_sign_in_at', type: TIMESTAMP, nullable: true })
  lastSignInAt: Date | null;
}
