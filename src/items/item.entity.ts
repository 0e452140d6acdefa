import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { JSON_DOCUMENT, TIMESTAMP, UUID, UUID_LENGTH } from '../database/column-types.js';
import { User } from '../users/user.entity.js';

/**
 * One item of any declared collection. The attributes live in `data`, validated against the
 * collection's schema; filters and sorts read them through per-attribute expression indexes
 * (item-indexes.service.ts). Ids are UUIDv7, so ordering by id is ordering by creation, which
 * keyset paging relies on.
 */
@Entity({ name: 'items' })
@Index('IDX_items_owner_collection_id', ['ownerId', 'collection', 'id'])
export class Item {
  @PrimaryColumn({ type: UUID, length: UUID_LENGTH })
  id: string;

  @Column({ type: 'varchar', length: 64 })
  collection: string;

  @Column({ name: 'owner_id', type: UUID, length: UUID_LENGTH })
  ownerId: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'owner_id' })
  owner?: Relation<User>;

  @Column({ type: JSON_DOCUMENT })
  data: Record<string, unknown>;

  /** Bumped by every write; the ETag, and the condition of every conditional update. */
  @Column({ type: 'integer' })
  version: number;

  @Column({ name: 'created_at', type: TIMESTAMP })
  createdAt: Date;

  @Column({ name: 'updated_at', type: TIMESTAMP })
  updatedAt: Date;
}
