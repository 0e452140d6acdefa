import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { TIMESTAMP, UUID, UUID_LENGTH } from '../database/column-types.js';
import { User } from '../users/user.entity.js';
import { DEVICE_DESCRIPTION_MAX } from './device-description.js';

/**
 * A person's sign-in at the authorization server, on one browser (OWASP ASVS 3.3.1: signing out
 * must end the session on the server, not only forget the cookie). The browser's encrypted cookie
 * carries a random secret; this row is found by its SHA-256, so the table alone cannot be replayed
 * as a cookie. Ending a session stamps ended_at and pulls expires_at back to that instant, so the
 * purge job needs one index to find both the ended and the expired.
 */
@Entity({ name: 'sessions' })
export class Session {
  /** SHA-256 (hex) of the secret in the session cookie. */
  @PrimaryColumn({ type: 'varchar', length: 64 })
  id: string;

  @Index()
  @Column({ name: 'user_id', type: UUID, length: UUID_LENGTH })
  userId: string;

  /** Deleting the user deletes their sessions. */
  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: Relation<User>;

  /** When the person signed in (OpenID Connect's auth_time). */
  @Column({ name: 'created_at', type: TIMESTAMP })
  createdAt: Date;

  /** SESSION_TTL_SECONDS after sign-in, or when the session was ended. */
  @Index()
  @Column({ name: 'expires_at', type: TIMESTAMP })
  expiresAt: Date;

  /**
   * The session's name where an administrator sees it (issue 48: the admin API lists a person's
   * sessions and ends one): random, so it says nothing of the cookie's secret, whose hash `id` is.
   * Nullable only because SQLite adds no NOT NULL column without a default: the migration gave
   * every existing session one, and every session started since gets one.
   */
  @Index('IDX_sessions_public_id', { unique: true })
  @Column({ name: 'public_id', type: UUID, length: UUID_LENGTH, nullable: true })
  publicId: string | null;

  /** When sign-out, a password change or "sign out everywhere else" ended it; null while it lasts. */
  @Column({ name: 'ended_at', type: TIMESTAMP, nullable: true })
  endedAt: Date | null;

  /**
   * The address the person signed in from, as Fastify's request.ip gives it (the client's own once
   * TRUST_PROXY names the proxies); 45 characters hold any IPv6 text. Null for sessions started
   * before it was recorded.
   */
  @Column({ type: 'varchar', length: 45, nullable: true })
  ip: string | null;

  /**
   * The device it was started on, as describeDevice (device-description.ts) words the User-Agent:
   * "Firefox on Windows", never the header itself (less personal data, a bounded size). Compared
   * with the person's recent sessions' at sign-in (a new device is audited). Null for sessions
   * started before it was recorded.
   */
  @Column({ type: 'varchar', length: DEVICE_DESCRIPTION_MAX, nullable: true })
  device: string | null;
}
