import type { Group } from '../../groups/group.entity.js';
import type { GroupMemberRef } from '../../groups/groups.service.js';
import { isObject, type Resource } from '../filter/resource-path.js';
import type { BodyAttributes } from '../resources/body-attributes.js';
import { withMeta } from '../resources/meta.js';
import { invalid } from '../resources/value-checks.js';
import { SCHEMA } from '../scim.constants.js';

/** RFC 7643 §4.2: a group, with its direct members (people as User, groups as Group). */
export function groupRepresentation(group: Group, members: GroupMemberRef[] | undefined, baseUrl: string): Resource {
  const body: Resource = {
    schemas: [SCHEMA.group],
    id: group.id,
    ...(group.externalId === null ? {} : { externalId: group.externalId }),
    displayName: group.displayName,
    ...(members === undefined || members.length === 0
      ? {}
      : { members: members.map((member) => ({ value: member.id, $ref: `${baseUrl}/${member.type === 'user' ? 'Users' : 'Groups'}/${member.id}`, type: member.type === 'user' ? 'User' : 'Group' })) }),
  };
  return withMeta(body, { resourceType: 'Group', created: group.createdAt, lastModified: group.updatedAt, location: `${baseUrl}/Groups/${group.id}` });
}

/** A member as a body names it: its id, and its type when the connector says (Entra ID sends only the value). */
export interface MemberValue {
  id: string;
  type?: 'user' | 'group';
}

export interface GroupInput {
  displayName: string;
  externalId: string | null;
  members: MemberValue[];
}

export function groupInput({ core }: BodyAttributes): GroupInput {
  const { displayName, externalId, members } = core;
  if (typeof displayName !== 'string' || displayName.trim() === '') throw invalid('displayName is required');
  const list = (Array.isArray(members) ? members : []).filter(isObject).map((member, index): MemberValue => {
    if (typeof member.value !== 'string' || member.value === '') throw invalid(`members[${index}].value is required`);
    const type = typeof member.type === 'string' ? member.type.toLowerCase() : undefined;
    if (type !== undefined && type !== 'user' && type !== 'group') throw invalid(`members[${index}].type is "User" or "Group"`);
    return { id: member.value, ...(type === undefined ? {} : { type }) };
  });
  return { displayName: displayName.trim(), externalId: typeof externalId === 'string' && externalId !== '' ? externalId : null, members: list };
}
