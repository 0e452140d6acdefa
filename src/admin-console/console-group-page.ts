import type { InteractionOutcome } from '../auth/interaction/interaction-responder.js';
import { NO_ERRORS, titleWith, type FormErrors } from './console-forms.js';
import type { ConsolePages } from './console-pages.js';
import { CONSOLE, segment } from './console-paths.js';
import type { ConsoleVisit } from './console-visit.js';

export const GROUPS = `${CONSOLE}/groups`;

export function groupPath(id: string): string {
  return `${GROUPS}/${segment(id)}`;
}

/** A group as GET /groups/{id} answers it (groupView with its direct members). */
export interface GroupView {
  id: string;
  display_name: string;
  external_id: string | null;
  created_at: string;
  updated_at: string;
  members: { type: 'user' | 'group'; id: string; name: string | null }[];
}

/** The add-a-member form as typed, and what was wrong with it. */
export interface MemberForm {
  username: string;
  errors: FormErrors;
}

/**
 * One group's page (shared by the page and by the add-a-member form, which shows its problems on
 * it): its names, its members, people first, and the forms an owner uses on it.
 */
export async function groupPage(pages: ConsolePages, visit: ConsoleVisit, group: GroupView, member: MemberForm = { username: '', errors: NO_ERRORS }, status = 200): Promise<InteractionOutcome> {
  const people = group.members.filter((m) => m.type === 'user');
  const groups = group.members.filter((m) => m.type === 'group');
  const data = { group, people, groups, base: groupPath(group.id), member, errors: member.errors, canWrite: visit.can('system', 'write'), canReadPeople: visit.can('people', 'read') };
  return pages.page(visit, 'group', titleWith(member.errors, group.display_name), data, { section: GROUPS, status });
}
