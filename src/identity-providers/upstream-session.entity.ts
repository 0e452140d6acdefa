import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { TIMESTAMP } from '../database/column-types.js';
import { Session } from '../sessions/session.entity.js';

/**
 * Which upstream sign-in started one of our sessions, for logout in both directions: our sign-out
 * sends the browser to the upstream's end_session_endpoint or Single Logout service with what it
 * needs, and the upstream's back-channel logout (its iss and sid, or its sub) finds our sessions.
 */
@Entity({ name: 'upstream_sessions' })
export class UpstreamSession {
  /** Our sessions row (the SHA-256 of the cookie's secret); ending or purging it removes this. */
  @PrimaryColumn({ name: 'session_id', type: 'varchar', length: 64 })
  sessionId: string;

  @ManyToOne(() => Session, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'session_id' })
  session?: Relation<Session>;

  @Index()
  @Column({ name: 'idp_id', type: 'varchar', length: 64 })
  idpId: string;

  @Column({ type: 'varchar', length: 255 })
  subject: string;

  /** The upstream's session id: OpenID Connect `sid` (Front/Back-Channel Logout), SAML `SessionIndex`; null when it gave none. */
  @Index()
  @Column({ name: 'upstream_sid', type: 'varchar', length: 255, nullable: true })
  upstreamSid: string | null;

  /**
   * What the upstream's logout needs back: the ID token for id_token_hint (OpenID Connect
   * RP-Initiated Logout §2), or the SAML NameID and its format. JSON; no secret is in it.
   */
  @Column({ name: 'logout_hint', type: 'text', nullable: true })
  logoutHint: string | null;

  @Column({ name: 'created_at', type: TIMESTAMP })
  createdAt: Date;
}
