import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { TIMESTAMP, UUID, UUID_LENGTH } from '../database/column-types.js';

/**
 * One security-relevant change (issue #4): who did what to which client, consent or token, and
 * when. Rows are only ever inserted; `details` never holds a secret, code or token.
 */
@Entity({ name: 'audit_events' })
@Index(['at'])
export class AuditEvent {
  @PrimaryColumn({ type: UUID, length: UUID_LENGTH })
  id: string;

  @Column({ type: TIMESTAMP })
  at: Date;

  /** `cli`, `client:<id>` or `user:<id>`. */
  @Column({ type: 'varchar', length: 100 })
  actor: string;

  /** e.g. `client.registered`, `consent.withdrawn`, `token.revoked`. */
  @Column({ type: 'varchar', length: 64 })
  action: string;

  /** What it was done to, e.g. `client:<id>`. */
  @Column({ type: 'varchar', length: 100 })
  subject: string;

  @Column({ type: 'simple-json' })
  details: Record<string, unknown>;
}
