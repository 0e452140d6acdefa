import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { In, type DataSource, type EntityManager } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import { dateParameter, execute, placeholders, rowDate } from '../database/prepared-statement.js';
import { User } from '../users/user.entity.js';
import { GroupMember, type GroupMemberRef, type NamedGroupMember } from './group-member.entity.js';
import { Group } from './group.entity.js';

/**
 * The groups a person is in, directly or through groups in groups: one statement. UNION (not
 * UNION ALL) keeps each group once, so the walk ends even if a cycle slipped in.
 */
const EFFECTIVE_GROUPS = `WITH RECURSIVE "effective"("group_id") AS (
  SELECT "group_id" FROM "group_members" WHERE "member_type" = 'user' AND "member_id" = ?
  UNION
  SELECT "m"."group_id" FROM "group_members" "m" JOIN "effective" "e" ON "m"."member_type" = 'group' AND "m"."member_id" = "e"."group_id"
)
SELECT "g"."id" AS "id", "g"."display_name" AS "display_name", "g"."external_id" AS "external_id", "g"."created_at" AS "created_at", "g"."updated_at" AS "updated_at"
FROM "effective" "e" JOIN "groups" "g" ON "g"."id" = "e"."group_id" ORDER BY "g"."display_name"`;

/** The groups that hold a group, directly or through others: what it must never come to hold (a cycle). */
const CONTAINERS = `WITH RECURSIVE "up"("group_id") AS (
  SELECT "group_id" FROM "group_members" WHERE "member_type" = 'group' AND "member_id" = ?
  UNION
  SELECT "m"."group_id" FROM "group_members" "m" JOIN "up" "u" ON "m"."member_type" = 'group' AND "m"."member_id" = "u"."group_id"
)
SELECT "group_id" FROM "up"`;

/** The groups and group_members tables. Writes run in the caller's transaction (GroupsService). */
@Injectable()
export class GroupStore {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  findById(id: string): Promise<Group | null> {
    return this.dataSource.manager.findOneBy(Group, { id });
  }

  findByName(displayName: string, manager: EntityManager = this.dataSource.manager): Promise<Group | null> {
    return manager.findOneBy(Group, { displayName });
  }

  list(): Promise<Group[]> {
    return this.dataSource.manager.find(Group, { order: { displayName: 'ASC' } });
  }

  /** One page by name (names are unique; the id only makes the order total), after `after`: a range of the name's unique index. */
  page(limit: number, after: { name: string; id: string } | null): Promise<Group[]> {
    const query = this.dataSource.manager.createQueryBuilder(Group, 'g').orderBy('"g"."display_name"', 'ASC').addOrderBy('"g"."id"', 'ASC').limit(limit);
    if (after !== null) query.where('("g"."display_name", "g"."id") > (:name, :id)', after);
    return query.getMany();
  }

  /** The direct members with what people know them by: a person's username, a group's name (null if gone meanwhile). */
  async namedMembers(groupId: string): Promise<NamedGroupMember[]> {
    const members = await this.members(groupId);
    const ids = (type: GroupMemberRef['type']) => members.filter((m) => m.type === type).map((m) => m.id);
    const [users, groups] = [
      ids('user').length === 0 ? [] : await this.dataSource.manager.find(User, { select: { id: true, username: true }, where: { id: In(ids('user')) } }),
      ids('group').length === 0 ? [] : await this.dataSource.manager.find(Group, { select: { id: true, displayName: true }, where: { id: In(ids('group')) } }),
    ];
    const names = new Map<string, string>([...users.map((u) => [`user:${u.id}`, u.username] as const), ...groups.map((g) => [`group:${g.id}`, g.displayName] as const)]);
    return members.map((m) => ({ ...m, name: names.get(`${m.type}:${m.id}`) ?? null }));
  }

  findByIds(ids: readonly string[]): Promise<Group[]> {
    return ids.length === 0 ? Promise.resolve([]) : this.dataSource.manager.find(Group, { where: { id: In([...ids]) }, order: { displayName: 'ASC' } });
  }

  async insert(group: Group, manager: EntityManager): Promise<void> {
    await manager.insert(Group, group as QueryDeepPartialEntity<Group>);
  }

  async update(id: string, changes: Partial<Pick<Group, 'displayName' | 'externalId' | 'updatedAt'>>, manager: EntityManager): Promise<void> {
    await manager.update(Group, { id }, changes as QueryDeepPartialEntity<Group>);
  }

  /** Deletes the group: its own member rows go by ON DELETE CASCADE, its rows as a member of other groups here. */
  async delete(id: string, manager: EntityManager): Promise<number> {
    await manager.delete(GroupMember, { memberType: 'group', memberId: id });
    return (await manager.delete(Group, { id })).affected ?? 0;
  }

  async members(groupId: string, manager: EntityManager = this.dataSource.manager): Promise<GroupMemberRef[]> {
    const rows = await manager.find(GroupMember, { where: { groupId }, order: { memberType: 'ASC', memberId: 'ASC' } });
    return rows.map((row) => ({ type: row.memberType, id: row.memberId }));
  }

  /** Adds the members not there yet (ON CONFLICT DO NOTHING: a repeat is no error); how many were added. */
  async insertMembers(groupId: string, members: readonly GroupMemberRef[], manager: EntityManager): Promise<number> {
    let added = 0;
    for (const member of members) {
      added += await execute(manager, 'INSERT INTO "group_members" ("group_id", "member_type", "member_id") VALUES (?, ?, ?) ON CONFLICT DO NOTHING', [groupId, member.type, member.id]);
    }
    return added;
  }

  async deleteMembers(groupId: string, members: readonly GroupMemberRef[], manager: EntityManager): Promise<number> {
    let removed = 0;
    for (const member of members) removed += (await manager.delete(GroupMember, { groupId, memberType: member.type, memberId: member.id })).affected ?? 0;
    return removed;
  }

  /** The members among `members` that exist: people by user id, groups by group id. */
  async existing(members: readonly GroupMemberRef[], manager: EntityManager): Promise<GroupMemberRef[]> {
    const userIds = members.filter((m) => m.type === 'user').map((m) => m.id);
    const groupIds = members.filter((m) => m.type === 'group').map((m) => m.id);
    const [users, groups] = [
      userIds.length === 0 ? [] : await manager.find(User, { select: { id: true }, where: { id: In(userIds) } }),
      groupIds.length === 0 ? [] : await manager.find(Group, { select: { id: true }, where: { id: In(groupIds) } }),
    ];
    return [...users.map((u) => ({ type: 'user' as const, id: u.id })), ...groups.map((g) => ({ type: 'group' as const, id: g.id }))];
  }

  /** The ids of every group that holds `groupId`, directly or not. */
  async containersOf(groupId: string, manager: EntityManager): Promise<Set<string>> {
    const rows = (await manager.query(placeholders(CONTAINERS, this.dialect), [groupId])) as { group_id: string }[];
    return new Set(rows.map((row) => row.group_id));
  }

  /**
   * PostgreSQL: one nesting change at a time (a transaction-scoped advisory lock), so that two
   * concurrent changes, each acyclic alone, cannot make a cycle together. SQLite writes one at a time anyway.
   */
  async lockNesting(manager: EntityManager): Promise<void> {
    if (this.dialect === 'postgres') await manager.query(`SELECT pg_advisory_xact_lock(hashtext('latchkey_group_nesting'))`);
  }

  directGroupsOf(userId: string): Promise<Group[]> {
    return this.dataSource.manager
      .createQueryBuilder(Group, 'g')
      .innerJoin(GroupMember, 'm', 'm.groupId = g.id AND m.memberType = :type AND m.memberId = :userId', { type: 'user', userId })
      .orderBy('g.display_name', 'ASC')
      .getMany();
  }

  async effectiveGroupsOf(userId: string): Promise<Group[]> {
    const rows = (await this.dataSource.query(placeholders(EFFECTIVE_GROUPS, this.dialect), [userId])) as Record<string, unknown>[];
    return rows.map((row) =>
      Object.assign(new Group(), {
        id: row.id as string,
        displayName: row.display_name as string,
        externalId: (row.external_id as string | null) ?? null,
        createdAt: rowDate(row.created_at as Date | string),
        updatedAt: rowDate(row.updated_at as Date | string),
      }),
    );
  }

  /** Deletes a person's memberships (they are being deleted); the groups they were in. */
  async forgetUser(userId: string, manager: EntityManager): Promise<string[]> {
    const rows = await manager.find(GroupMember, { where: { memberType: 'user', memberId: userId } });
    if (rows.length > 0) await manager.delete(GroupMember, { memberType: 'user', memberId: userId });
    return rows.map((row) => row.groupId);
  }

  /** The groups with these display names (an upstream's group values, issue 46), in the caller's transaction. */
  findByNames(names: readonly string[], manager: EntityManager): Promise<Group[]> {
    return names.length === 0 ? Promise.resolve([]) : manager.find(Group, { where: { displayName: In([...names]) } });
  }
  /** The groups with these external ids (several groups may share one). */
  findByExternalIds(externalIds: readonly string[], manager: EntityManager): Promise<Group[]> {
    return externalIds.length === 0 ? Promise.resolve([]) : manager.find(Group, { where: { externalId: In([...externalIds]) } });
  }
  /** A new group unless its name is taken (ON CONFLICT DO NOTHING: a failed statement would poison a PostgreSQL transaction); whether it was inserted. */
  async insertIfAbsent(group: Group, manager: EntityManager): Promise<boolean> {
    const sql = 'INSERT INTO "groups" ("id", "display_name", "external_id", "created_at", "updated_at") VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING';
    return (await execute(manager, sql, [group.id, group.displayName, group.externalId, dateParameter(group.createdAt, this.dialect), dateParameter(group.updatedAt, this.dialect)])) === 1;
  }
  /** The ids of the groups a person is directly in, in the caller's transaction. */
  async directGroupIdsOf(userId: string, manager: EntityManager): Promise<Set<string>> {
    const rows = await manager.find(GroupMember, { select: { groupId: true }, where: { memberType: 'user', memberId: userId } });
    return new Set(rows.map((row) => row.groupId));
  }
  private get dialect(): string {
    return this.dataSource.options.type;
  }
}
