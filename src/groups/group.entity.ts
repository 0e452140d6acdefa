import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import { TIMESTAMP, UUID, UUID_LENGTH } from '../database/column-types.js';

/**
 * A group of people (and of other groups, issue 46): from SCIM (RFC 7643 §4.2), the CLI or an
 * upstream identity provider's claim. Its name is unique, as SCIM's displayName is what an
 * administrator and the groups claim know it by; its id is what clients may opt to see instead.
 */
@Entity({ name: 'groups' })
export class Group {
  @PrimaryColumn({ type: UUID, length: UUID_LENGTH })
  id: string;

  @Column({ name: 'display_name', type: 'varchar', length: 256, unique: true })
  displayName: string;

  /** RFC 7643 §3.1 externalId: the provisioning client's own id for the group; ours never depends on it. */
  @Column({ name: 'external_id', type: 'varchar', length: 255, nullable: true })
  externalId: string | null;

  @CreateDateColumn({ name: 'created_at', type: TIMESTAMP })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: TIMESTAMP })
  updatedAt: Date;
}
