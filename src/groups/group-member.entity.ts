import { Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { UUID, UUID_LENGTH } from '../database/column-types.js';
import { Group } from './group.entity.js';

/** What a group holds: a person (a user id) or another group (nested; never in a cycle). */
export type GroupMemberType = 'user' | 'group';

/** A member as callers name it. */
export type GroupMemberRef = { type: GroupMemberType; id: string };

/** A member as `groups:show` and the admin API show it: with the person's username or the group's name. */
export type NamedGroupMember = GroupMemberRef & { name: string | null };

/**
 * One direct member of one group. The member is a person or a group, so member_id has no foreign
 * key: a group member's rows go when that group is deleted (GroupsService.delete), a person's when
 * the person is deleted (GroupsService.forgetUser, called by AccountsService.deleteUser).
 */
@Entity({ name: 'group_members' })
@Index(['memberType', 'memberId'])
export class GroupMember {
  @PrimaryColumn({ name: 'group_id', type: UUID, length: UUID_LENGTH })
  groupId: string;

  @PrimaryColumn({ name: 'member_type', type: 'varchar', length: 8 })
  memberType: GroupMemberType;

  @PrimaryColumn({ name: 'member_id', type: UUID, length: UUID_LENGTH })
  memberId: string;

  @ManyToOne(() => Group, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'group_id' })
  group?: Relation<Group>;
}
