import type { NamedGroupMember } from './group-member.entity.js';
import type { Group } from './group.entity.js';

/** A group as `groups:*` print it and the admin API answers it; with its direct members when shown alone. */
export function groupView(group: Group, members?: readonly NamedGroupMember[]): Record<string, unknown> {
  return {
    id: group.id,
    display_name: group.displayName,
    external_id: group.externalId,
    created_at: group.createdAt.toISOString(),
    updated_at: group.updatedAt.toISOString(),
    ...(members ? { members } : {}),
  };
}
