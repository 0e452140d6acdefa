import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Client } from '../clients/client.entity.js';
import { TIMESTAMP, UUID, UUID_LENGTH } from '../database/column-types.js';
import { User } from '../users/user.entity.js';

/**
 * An authorization code (RFC 6749 §4.1.2): short-lived, single-use, bound to the client, the
 * redirect URI, the user, the granted scope and the PKCE challenge (RFC 7636 §4.4).
 * Only the SHA-256 of the code is stored.
 */
@Entity({ name: 'authorization_codes' })
export class AuthorizationCode {
  @PrimaryColumn({ type: UUID, length: UUID_LENGTH })
  id: string;

  @Index({ unique: true })
  @Column({ name: 'code_hash', type: 'varchar', length: 64 })
  codeHash: string;

  @Column({ name: 'client_id', type: 'varchar', length: 64 })
  clientId: string;

  @ManyToOne(() => Client, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'client_id' })
  client?: Relation<Client>;

  @Column({ name: 'user_id', type: UUID, length: UUID_LENGTH })
  userId: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: Relation<User>;

  /** The redirect URI the code was sent to. */
  @Column({ name: 'redirect_uri', type: 'text' })
  redirectUri: string;

  /** Whether the authorization request carried redirect_uri; if so the token request must repeat it (RFC 6749 §4.1.3). */
  @Column({ name: 'redirect_uri_in_request', type: 'boolean' })
  redirectUriInRequest: boolean;

  @Column({ type: 'text' })
  scope: string;

  /** RFC 7636 §4.2 S256 challenge, or null for a confidential client that sent none. */
  @Column({ name: 'code_challenge', type: 'varchar', length: 128, nullable: true })
  codeChallenge: string | null;

  /** OpenID Connect Core §3.1.2.1: the authentication request's nonce, echoed in the ID token; null when none was sent. */
  @Column({ type: 'varchar', length: 2048, nullable: true })
  nonce: string | null;

  /** When the person signed in (Core §2 auth_time); null for codes issued before OpenID Connect. */
  @Column({ name: 'auth_time', type: TIMESTAMP, nullable: true })
  authTime: Date | null;

  /** How the person signed in (RFC 8176 amr values, space-separated), for the ID token's amr and acr; null for codes issued before it was recorded (a password). */
  @Column({ type: 'varchar', length: 64, nullable: true })
  amr: string | null;

  /** The sign-in session's public id (ID token sid, Back-Channel Logout 1.0 §2.1); null outside OpenID Connect. */
  @Column({ type: 'varchar', length: 64, nullable: true })
  sid: string | null;

  /** RFC 8707 §2.1: the resources the authorization request named, space-separated; null when it named none. */
  @Column({ type: 'text', nullable: true })
  resources: string | null;

  /** RFC 9449 §10: the thumbprint of the DPoP key the code must be redeemed with (dpop_jkt, or the proof sent to /par); null: none. */
  @Column({ name: 'dpop_jkt', type: 'varchar', length: 64, nullable: true })
  dpopJkt: string | null;

  @Index()
  @Column({ name: 'expires_at', type: TIMESTAMP })
  expiresAt: Date;

  /** Set once, atomically, when the code is redeemed; a code with consumed_at set is dead. */
  @Column({ name: 'consumed_at', type: TIMESTAMP, nullable: true })
  consumedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: TIMESTAMP })
  createdAt: Date;
}
