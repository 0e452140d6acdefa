import { GroupMember } from './group-member.entity.js';
import { Group } from './group.entity.js';

/** The entities of groups/, listed in src/schema/entities.ts. */
export const GROUP_ENTITIES: (new () => object)[] = [Group, GroupMember];
