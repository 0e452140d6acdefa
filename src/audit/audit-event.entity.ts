import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { TIMESTAMP, UUID, UUID_LENGTH } from '../database/column-types.js';

/**
 * One security-relevant change (issue #4): who did what to which client, consent or token, and
 * when. Rows are only ever inserted; `details` never holds a secret, code or token.
 *
 * The indexes serve the admin API's filters (issue 48), newest first: the whole log, a time window
 * and each filter on actor, subject (a person, a client) or action is one range of an index in
 * (at, id) order, which keyset paging continues from. (The first index, on (at) alone, is now
 * redundant; the migrations' check wants a migration that only adds, so it goes in a later one.) The action index is declared by
 * its migration alone: on PostgreSQL it is under the C collation (so an event prefix is a byte
 * range whatever the database's locale), which TypeORM's schema builder cannot describe.
 */
@Entity({ name: 'audit_events' })
@Index(['at'])
@Index('IDX_audit_events_at_id', ['at', 'id'])
@Index('IDX_audit_events_actor_at', ['actor', 'at', 'id'])
@Index('IDX_audit_events_subject_at', ['subject', 'at', 'id'])
@Index('IDX_audit_events_action_at', { synchronize: false })
export class AuditEvent {
  @PrimaryColumn({ type: UUID, length: UUID_LENGTH })
  id: string;

  @Column({ type: TIMESTAMP })
  at: Date;

  /** `cli`, `client:<id>`, `user:<id>` or `idp:<id>`. */
  @Column({ type: 'varchar', length: 100 })
  actor: string;

  /** Where the change came from: the caller's address for a change made over the admin API; null otherwise. */
  @Column({ type: 'varchar', length: 45, nullable: true })
  ip: string | null;

  /** e.g. `client.registered`, `consent.withdrawn`, `token.revoked`. */
  @Column({ type: 'varchar', length: 64 })
  action: string;

  /** What it was done to, e.g. `client:<id>`. */
  @Column({ type: 'varchar', length: 100 })
  subject: string;

  @Column({ type: 'simple-json' })
  details: Record<string, unknown>;
}
