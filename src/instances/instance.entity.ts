import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { TIMESTAMP, UUID, UUID_LENGTH } from '../database/column-types.js';

/**
 * One server instance as it last said it was running (issue 48, the dashboard's "instances seen"):
 * written by its own heartbeat every INSTANCE_HEARTBEAT_SECONDS, removed when it stops gracefully,
 * purged a day after it was last seen when it did not (a crash, a killed container). Nothing here
 * is about a person; no foreign keys.
 */
@Entity({ name: 'instances' })
export class Instance {
  /** A random id the process takes at boot: a restart is a new instance. */
  @PrimaryColumn({ type: UUID, length: UUID_LENGTH })
  id: string;

  /** os.hostname(): the container's or the machine's name. */
  @Column({ type: 'varchar', length: 255 })
  hostname: string;

  @Column({ type: 'integer' })
  pid: number;

  /** Latchkey's version (package.json). */
  @Column({ type: 'varchar', length: 64 })
  version: string;

  /** Node.js's version (process.versions.node). */
  @Column({ type: 'varchar', length: 32 })
  node: string;

  /** Its own INSTANCE_HEARTBEAT_SECONDS: whether it is live is judged by its own interval, whatever the reader's. */
  @Column({ name: 'heartbeat_seconds', type: 'integer' })
  heartbeatSeconds: number;

  @Column({ name: 'started_at', type: TIMESTAMP })
  startedAt: Date;

  /** Its last heartbeat: the list (seen in the last day) and the purge read by it. */
  @Index()
  @Column({ name: 'last_seen_at', type: TIMESTAMP })
  lastSeenAt: Date;
}
