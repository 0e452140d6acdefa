import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { TIMESTAMP, UUID, UUID_LENGTH } from '../database/column-types.js';
import { User } from '../users/user.entity.js';
import type { AdminRole } from '../scopes/admin-scopes.js';

/** One administrator role held by one person (issue 48); gone with the person (ON DELETE CASCADE). */
@Entity({ name: 'admin_roles' })
export class AdminRoleGrant {
  @PrimaryColumn({ name: 'user_id', type: UUID, length: UUID_LENGTH })
  userId: string;

  @PrimaryColumn({ type: 'varchar', length: 32 })
  role: AdminRole;

  @Column({ name: 'granted_at', type: TIMESTAMP })
  grantedAt: Date;

  /** The audit actor who granted it: `cli`, `user:<id>` or `client:<id>`. */
  @Column({ name: 'granted_by', type: 'varchar', length: 100 })
  grantedBy: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: Relation<User>;
}
