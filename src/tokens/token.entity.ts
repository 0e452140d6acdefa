import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Client } from '../clients/client.entity.js';
import { TokenType } from '../common/oauth.constants.js';
import { TIMESTAMP, UUID, UUID_LENGTH } from '../database/column-types.js';
import { User } from '../users/user.entity.js';

export const TokenKind = { Access: 'access', Refresh: 'refresh' } as const;
export type TokenKind = (typeof TokenKind)[keyof typeof TokenKind];

/**
 * An issued access or refresh token, stored by the SHA-256 of its value (one unique index: a token
 * check is one indexed lookup). Tokens issued from one authorization code share a family, so that a
 * replayed code or a reused refresh token can revoke the whole family at once (RFC 6749 §4.1.2,
 * RFC 9700 §4.14.2).
 */
@Entity({ name: 'tokens' })
// Cascading deletes of clients and users, and per-user-and-client withdrawal, find their rows by index.
@Index(['userId', 'clientId'])
@Index(['clientId'])
export class Token {
  @PrimaryColumn({ type: UUID, length: UUID_LENGTH })
  id: string;

  @Column({ type: 'varchar', length: 16 })
  kind: TokenKind;

  @Index({ unique: true })
  @Column({ name: 'token_hash', type: 'varchar', length: 64 })
  tokenHash: string;

  @Index()
  @Column({ name: 'family_id', type: UUID, length: UUID_LENGTH })
  familyId: string;

  @Column({ name: 'client_id', type: 'varchar', length: 64 })
  clientId: string;

  @ManyToOne(() => Client, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'client_id' })
  client?: Relation<Client>;

  /** The resource owner; null for tokens that act for the client itself. */
  @Column({ name: 'user_id', type: UUID, length: UUID_LENGTH, nullable: true })
  userId: string | null;

  @ManyToOne(() => User, { onDelete: 'CASCADE', nullable: true })
  @JoinColumn({ name: 'user_id' })
  user?: Relation<User>;

  @Column({ type: 'text' })
  scope: string;

  @Index()
  @Column({ name: 'expires_at', type: TIMESTAMP })
  expiresAt: Date;

  /** A refresh token is consumed when it is rotated; presenting it again is reuse. */
  @Column({ name: 'consumed_at', type: TIMESTAMP, nullable: true })
  consumedAt: Date | null;

  @Column({ name: 'revoked_at', type: TIMESTAMP, nullable: true })
  revokedAt: Date | null;

  /** How an access token is presented: bearer (RFC 6750) or mac (draft-ietf-oauth-v2-http-mac). Refresh tokens keep the default. */
  @Column({ name: 'token_type', type: 'varchar', length: 16, default: TokenType.Bearer })
  tokenType: TokenType;

  /** A MAC token's mac_key, encrypted (mac-key-cipher.ts): the server must recompute MACs, so no hash will do. Null otherwise. */
  @Column({ name: 'mac_key', type: 'text', nullable: true })
  macKey: string | null;

  /**
   * When the person signed in, for a token issued from an OpenID Connect authentication: a refresh
   * token carries it so that the ID token issued on refresh keeps the original auth_time (Core §12.2).
   */
  @Column({ name: 'auth_time', type: TIMESTAMP, nullable: true })
  authTime: Date | null;

  /** How the person signed in (RFC 8176 amr, space-separated), kept like auth_time for the ID token issued on refresh. */
  @Column({ type: 'varchar', length: 64, nullable: true })
  amr: string | null;

  /** The sign-in session's public id, kept for the ID token of a refresh (its sid). */
  @Column({ type: 'varchar', length: 64, nullable: true })
  sid: string | null;

  /**
   * RFC 9449 §6: the SHA-256 thumbprint (RFC 7638) of the DPoP key a token is bound to (its
   * cnf.jkt). A bound access token opens a resource only with a proof made with that key; a
   * public client's bound refresh token is redeemed only with one. Null: not bound.
   */
  @Column({ name: 'dpop_jkt', type: 'varchar', length: 64, nullable: true })
  dpopJkt: string | null;

  /**
   * RFC 8707: the resources the token is restricted to (its audience), space-separated; null when
   * the request named none (no restriction). A refresh token keeps the whole grant's resources.
   */
  @Column({ type: 'text', nullable: true })
  audience: string | null;

  /**
   * RFC 8693: the access token this one was exchanged from (its subject token); null for a token
   * not issued by an exchange. Revoking a token revokes every token exchanged from it, at any depth
   * (TokenStore walks this column); an exchanged token also joins its subject token's family.
   */
  @Index()
  @Column({ name: 'parent_id', type: UUID, length: UUID_LENGTH, nullable: true })
  parentId: string | null;

  /** RFC 8693 §4.1: the act claim of an exchanged token (the acting client, nesting the earlier ones), as JSON; null otherwise. */
  @Column({ type: 'text', nullable: true })
  act: string | null;

  /**
   * A rotated refresh token's successor pair, sealed with a key derived from this token's own value
   * (successor-seal.ts): what the same client presenting it again within REFRESH_REUSE_GRACE_SECONDS
   * is answered. Written with consumed_at, by the rotation's conditional UPDATE; null otherwise.
   */
  @Column({ type: 'text', nullable: true })
  successor: string | null;

  @CreateDateColumn({ name: 'created_at', type: TIMESTAMP })
  createdAt: Date;
}
