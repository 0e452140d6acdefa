import { DomainError } from '../common/domain-error.js';
import type { GroupMemberRef } from './group-member.entity.js';

/** The longest group name (the column's length; SCIM's displayName has no limit of its own). */
export const GROUP_NAME_MAX = 256;
const EXTERNAL_ID_MAX = 255;
const UUID_FORMAT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** C0 and C1 controls: a name is shown on pages, in tokens and in logs, one line. */
const CONTROL = { test: (value: string): boolean => [...value].some((c) => c.charCodeAt(0) <= 0x1f || (c.charCodeAt(0) >= 0x7f && c.charCodeAt(0) <= 0x9f)) };

/** Whether `value` has the shape of our ids (a malformed id finds nothing, and PostgreSQL's uuid column would refuse it). */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_FORMAT.test(value);
}

/** A group's name as stored: trimmed, 1 to 256 characters, one line. */
export function checkedGroupName(value: unknown): string {
  const name = typeof value === 'string' ? value.trim() : '';
  if (name.length === 0 || name.length > GROUP_NAME_MAX || CONTROL.test(name)) {
    throw new DomainError('invalid_group', `A group's name must be 1 to ${GROUP_NAME_MAX} characters on one line.`);
  }
  return name;
}

export function checkedExternalId(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string' || value.length === 0 || value.length > EXTERNAL_ID_MAX || CONTROL.test(value)) {
    throw new DomainError('invalid_group', `A group's externalId must be 1 to ${EXTERNAL_ID_MAX} characters on one line.`);
  }
  return value;
}

/** Members as given, each once; an id that cannot be ours is one we do not know. */
export function checkedMembers(value: unknown): GroupMemberRef[] {
  if (!Array.isArray(value)) throw new DomainError('invalid_group', 'Members must be a list of { type: "user" | "group", id }.');
  const seen = new Map<string, GroupMemberRef>();
  for (const member of value as unknown[]) {
    const { type, id } = (member ?? {}) as { type?: unknown; id?: unknown };
    if (type !== 'user' && type !== 'group') throw new DomainError('invalid_group', 'A member\'s type is "user" or "group".');
    if (!isUuid(id)) throw new DomainError('member_not_found', `No ${type} with id ${JSON.stringify(id)}.`);
    seen.set(`${type}:${id.toLowerCase()}`, { type, id: id.toLowerCase() });
  }
  return [...seen.values()];
}
