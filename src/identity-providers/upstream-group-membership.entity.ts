import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { UUID, UUID_LENGTH } from '../database/column-types.js';
import { Group } from '../groups/group.entity.js';
import { User } from '../users/user.entity.js';
import { IdentityProvider } from './identity-provider.entity.js';

/**
 * A group membership an upstream identity provider vouches for (issue 46): at the person's last
 * sign-in through `idp`, its groups claim or attribute named `group`. The membership itself is a
 * row of group_members; this row only says where it came from, so that the next sign-in takes out
 * what the upstream no longer names and nothing an administrator or SCIM made. Each goes with its
 * provider, its person or its group.
 */
@Entity({ name: 'upstream_group_memberships' })
export class UpstreamGroupMembership {
  @PrimaryColumn({ name: 'idp_id', type: 'varchar', length: 64 })
  idpId: string;

  @Index()
  @PrimaryColumn({ name: 'user_id', type: UUID, length: UUID_LENGTH })
  userId: string;

  @Index()
  @PrimaryColumn({ name: 'group_id', type: UUID, length: UUID_LENGTH })
  groupId: string;

  /**
   * Whether the sync made the group_members row. False when the person was in the group already
   * (an administrator's or SCIM's doing): then the upstream dropping the group leaves them in it.
   */
  @Column({ name: 'added_by_upstream', type: 'boolean' })
  addedByUpstream: boolean;

  @ManyToOne(() => IdentityProvider, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'idp_id' })
  idp?: Relation<IdentityProvider>;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: Relation<User>;

  @ManyToOne(() => Group, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'group_id' })
  group?: Relation<Group>;
}
