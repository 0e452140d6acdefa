import { MembershipListeners } from './membership-listeners.js';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { AuditActor } from '../audit/audit-actor.js';
import { AuditService } from '../audit/audit.service.js';
import { Clock } from '../common/clock.js';
import { DomainError, type DomainErrorCode } from '../common/domain-error.js';
import { uuidv7 } from '../common/random.js';
import { isUniqueViolation } from '../database/unique-violation.js';
import { Transactions } from '../database/transactions.js';
import { checkedExternalId, checkedGroupName, checkedMembers, isUuid } from './group-input.js';
import type { GroupMemberRef, NamedGroupMember } from './group-member.entity.js';
import { Group } from './group.entity.js';
import { GroupStore } from './group.store.js';

export type { GroupMemberRef, NamedGroupMember } from './group-member.entity.js';

/** An expected refusal found inside a transaction: returned, not thrown (Transactions: a throw rolls back the neighbours of a group commit too). */
type Refusal = { refused: DomainErrorCode; message: string };

const MESSAGES: Partial<Record<DomainErrorCode, string>> = {
  group_not_found: 'No such group.',
  member_not_found: 'A member named is neither a person nor a group here.',
  group_cycle: 'A group cannot hold itself, nor a group that holds it (directly or through other groups).',
  group_name_taken: 'Another group has this name.',
};

function refuse(code: DomainErrorCode, detail?: string): Refusal {
  return { refused: code, message: detail ?? MESSAGES[code] ?? code };
}

/**
 * Groups and their members (issue 46). Every change is one transaction with its audit event
 * (`group.created|updated|deleted|members_changed`, subject `group:<id>`). Groups may hold groups;
 * a change that would make a cycle is refused (`group_cycle`), so the effective groups of a person
 * (groupsOf) are a plain upward walk.
 */
@Injectable()
export class GroupsService {
  constructor(
    private readonly store: GroupStore,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    private readonly membershipListeners: MembershipListeners,
  ) {}

  async create(input: { displayName: string; externalId?: string | null; members?: GroupMemberRef[] }, actor: AuditActor): Promise<Group> {
    const now = this.clock.now();
    const group = Object.assign(new Group(), { id: uuidv7(), displayName: checkedGroupName(input.displayName), externalId: checkedExternalId(input.externalId), createdAt: now, updatedAt: now });
    const members = checkedMembers(input.members ?? []);
    await this.write(async (manager) => {
      if (await this.store.findByName(group.displayName, manager)) return refuse('group_name_taken', `A group named "${group.displayName}" exists already.`);
      const problem = await this.memberProblem(group.id, members, manager);
      if (problem) return problem;
      await this.store.insert(group, manager);
      await this.store.insertMembers(group.id, members, manager);
      await this.audit.record({ actor, action: 'group.created', subject: `group:${group.id}`, details: { display_name: group.displayName, external_id: group.externalId, members: members.length } }, manager);
      return undefined;
    });
    return group;
  }

  /** A malformed id finds nothing (null), as an unknown one does. */
  findById(id: string): Promise<Group | null> {
    return isUuid(id) ? this.store.findById(id.toLowerCase()) : Promise.resolve(null);
  }

  findByName(displayName: string): Promise<Group | null> {
    return this.store.findByName(displayName);
  }

  /** Every group, by name. */
  list(): Promise<Group[]> {
    return this.store.list();
  }

  async update(id: string, changes: { displayName?: string; externalId?: string | null }, actor: AuditActor): Promise<Group> {
    const group = await this.require(id);
    const next: { displayName?: string; externalId?: string | null } = {};
    if (changes.displayName !== undefined) next.displayName = checkedGroupName(changes.displayName);
    if (changes.externalId !== undefined) next.externalId = checkedExternalId(changes.externalId);
    const changed = Object.fromEntries(Object.entries(next).filter(([field, value]) => group[field as keyof typeof next] !== value));
    if (Object.keys(changed).length === 0) return group;
    const updatedAt = this.clock.now();
    await this.write(async (manager) => {
      if (next.displayName !== undefined && next.displayName !== group.displayName && (await this.store.findByName(next.displayName, manager))) return refuse('group_name_taken', `A group named "${next.displayName}" exists already.`);
      await this.store.update(group.id, { ...changed, updatedAt }, manager);
      await this.audit.record({ actor, action: 'group.updated', subject: `group:${group.id}`, details: { changes: Object.fromEntries(Object.entries(changed).map(([field, value]) => [field, { old: group[field as keyof typeof next], new: value }])) } }, manager);
      return undefined;
    });
    return Object.assign(new Group(), group, changed, { updatedAt });
  }

  async delete(id: string, actor: AuditActor): Promise<void> {
    const group = await this.require(id);
    await this.write(async (manager) => {
      if ((await this.store.delete(group.id, manager)) === 0) return refuse('group_not_found');
      await this.audit.record({ actor, action: 'group.deleted', subject: `group:${group.id}`, details: { display_name: group.displayName } }, manager);
      return undefined;
    });
  }

  /** One page of groups by name, after the last of the previous page (the admin API's list). */
  page(limit: number, after: { name: string; id: string } | null): Promise<Group[]> {
    return this.store.page(limit, after);
  }

  /** The direct members with their names, people then groups. */
  async namedMembers(groupId: string): Promise<NamedGroupMember[]> {
    return this.store.namedMembers((await this.require(groupId)).id);
  }

  /** The direct members, people then groups. */
  async members(groupId: string): Promise<GroupMemberRef[]> {
    return this.store.members((await this.require(groupId)).id);
  }

  /** Adds members; those already in are left as they are (idempotent). */
  async addMembers(groupId: string, members: GroupMemberRef[], actor: AuditActor): Promise<void> {
    return this.changeMembers(groupId, actor, { add: checkedMembers(members) });
  }

  /** Removes members; naming one that is not in is no error. */
  async removeMembers(groupId: string, members: GroupMemberRef[], actor: AuditActor): Promise<void> {
    return this.changeMembers(groupId, actor, { remove: checkedMembers(members) });
  }

  /** Replaces every member with `members` (SCIM PUT). */
  async setMembers(groupId: string, members: GroupMemberRef[], actor: AuditActor): Promise<void> {
    return this.changeMembers(groupId, actor, { replace: checkedMembers(members) });
  }

  directGroupsOf(userId: string): Promise<Group[]> {
    return isUuid(userId) ? this.store.directGroupsOf(userId) : Promise.resolve([]);
  }

  /** The person's effective groups, by name: those they are in, and every group holding one of those, at any depth. One query. */
  groupsOf(userId: string): Promise<Group[]> {
    return isUuid(userId) ? this.store.effectiveGroupsOf(userId) : Promise.resolve([]);
  }

  /** A person is being deleted: their memberships go, in the deleting transaction (AccountsService.deleteUser). */
  async forgetUser(userId: string, manager: EntityManager): Promise<void> {
    await this.store.forgetUser(userId, manager);
  }

  /** The groups an upstream's values name (issue 46), by display name or by external id, in the caller's transaction. */
  groupsMatching(values: readonly string[], by: 'name' | 'external_id', manager: EntityManager): Promise<Group[]> {
    return by === 'name' ? this.store.findByNames(values, manager) : this.store.findByExternalIds(values, manager);
  }
  /** A group an upstream named, created in the caller's transaction (audited as `actor`); null when the name is not a valid group name or is taken meanwhile. */
  async createInTransaction(displayName: string, actor: AuditActor, manager: EntityManager): Promise<Group | null> {
    let name: string;
    try {
      name = checkedGroupName(displayName);
    } catch {
      return null;
    }
    const now = this.clock.now();
    const group = Object.assign(new Group(), { id: uuidv7(), displayName: name, externalId: null, createdAt: now, updatedAt: now });
    if (!(await this.store.insertIfAbsent(group, manager))) return null;
    await this.audit.record({ actor, action: 'group.created', subject: `group:${group.id}`, details: { display_name: group.displayName, external_id: null, members: 0 } }, manager);
    return group;
  }
  /** The ids of the groups a person is directly in, in the caller's transaction. */
  directGroupIdsIn(userId: string, manager: EntityManager): Promise<Set<string>> {
    return this.store.directGroupIdsOf(userId, manager);
  }
  /**
   * Adds a person to a group or takes them out, in the caller's transaction, audited as
   * `group.members_changed` by `actor` when something changed (an upstream's sign-in: no cycle is
   * possible, a person holds no group). Whether it changed anything.
   */
  async setPersonInGroup(groupId: string, userId: string, member: boolean, actor: AuditActor, manager: EntityManager): Promise<boolean> {
    const person: GroupMemberRef = { type: 'user', id: userId };
    const changed = member ? await this.store.insertMembers(groupId, [person], manager) : await this.store.deleteMembers(groupId, [person], manager);
    if (changed === 0) return false;
    await this.store.update(groupId, { updatedAt: this.clock.now() }, manager);
    await this.audit.record({ actor, action: 'group.members_changed', subject: `group:${groupId}`, details: { added: member ? [person] : [], removed: member ? [] : [person] } }, manager);
    return true;
  }
  private async changeMembers(groupId: string, actor: AuditActor, change: { add?: GroupMemberRef[]; remove?: GroupMemberRef[]; replace?: GroupMemberRef[] }): Promise<void> {
    const group = await this.require(groupId);
    await this.write(async (manager) => {
      const current = await this.store.members(group.id, manager);
      const key = (m: GroupMemberRef) => `${m.type}:${m.id}`;
      const held = new Set(current.map(key));
      const wanted = change.replace;
      const add = (wanted ?? change.add ?? []).filter((m) => !held.has(key(m)));
      const keep = wanted && new Set(wanted.map(key));
      const remove = keep ? current.filter((m) => !keep.has(key(m))) : (change.remove ?? []).filter((m) => held.has(key(m)));
      // The people named here are members by the caller's word, also those in already (an upstream's sync may have put them there).
      const named = (wanted ?? change.add ?? []).filter((m) => m.type === 'user' && held.has(key(m))).map((m) => m.id);
      await this.membershipListeners.named(group.id, named, manager);
      if (add.length === 0 && remove.length === 0) return undefined;
      const problem = await this.memberProblem(group.id, add, manager);
      if (problem) return problem;
      await this.store.deleteMembers(group.id, remove, manager);
      await this.store.insertMembers(group.id, add, manager);
      await this.store.update(group.id, { updatedAt: this.clock.now() }, manager);
      await this.audit.record({ actor, action: 'group.members_changed', subject: `group:${group.id}`, details: { added: add, removed: remove } }, manager);
      return undefined;
    });
  }

  /** Why `members` cannot join group `groupId`: one of them does not exist, or is the group or a group holding it (a cycle). */
  private async memberProblem(groupId: string, members: readonly GroupMemberRef[], manager: EntityManager): Promise<Refusal | undefined> {
    if (members.length === 0) return undefined;
    const found = new Set((await this.store.existing(members, manager)).map((m) => `${m.type}:${m.id}`));
    const missing = members.find((m) => !found.has(`${m.type}:${m.id}`));
    if (missing) return refuse('member_not_found', `No ${missing.type} with id ${missing.id}.`);
    const groups = members.filter((m) => m.type === 'group');
    if (groups.length === 0) return undefined;
    await this.store.lockNesting(manager);
    const containers = await this.store.containersOf(groupId, manager);
    return groups.some((m) => m.id === groupId || containers.has(m.id)) ? refuse('group_cycle') : undefined;
  }

  /** Runs a change; its expected refusals become DomainErrors after the rollback, and a name taken by a concurrent writer too. */
  private async write(work: (manager: EntityManager) => Promise<Refusal | undefined>): Promise<void> {
    let outcome: Refusal | undefined;
    try {
      outcome = await this.transactions.run(async (manager) => {
        const refusal = await work(manager);
        // A refusal found after a write would leave it: refusals are found before any write, so nothing is written.
        return refusal;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new DomainError('group_name_taken', MESSAGES.group_name_taken!);
      throw error;
    }
    if (outcome) throw new DomainError(outcome.refused, outcome.message);
  }

  private async require(id: string): Promise<Group> {
    const group = await this.findById(id);
    if (!group) throw new DomainError('group_not_found', `No group with id ${JSON.stringify(id)}.`);
    return group;
  }
}
