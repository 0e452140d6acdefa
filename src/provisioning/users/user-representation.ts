import type { Group } from '../../groups/group.entity.js';
import type { User } from '../../users/user.entity.js';
import { isObject, type Resource } from '../filter/resource-path.js';
import { withMeta } from '../resources/meta.js';
import { SCHEMA } from '../scim.constants.js';
import type { ScimUser } from './scim-user.entity.js';

/** Enterprise attributes kept in their own columns; the others of the extension live in `attributes`. */
const ENTERPRISE_COLUMNS = ['employeeNumber', 'department', 'manager'] as const;

/**
 * A person as a SCIM User (RFC 7643 §4.1, §4.3): userName, name, the primary email and active from
 * the person; externalId, the enterprise extension and the other attributes from what the
 * directory said (scim_users); `groups` (read-only) from the groups they belong to directly.
 * Unassigned attributes are left out (RFC 7643 §2.5). Never a password or anything of a second factor.
 */
export function userRepresentation(user: User, extra: ScimUser | null, groups: Group[] | undefined, baseUrl: string): Resource {
  const stored = extra?.attributes ?? {};
  const enterprise = compact({
    ...asObject(stored[SCHEMA.enterpriseUser]),
    employeeNumber: extra?.employeeNumber,
    department: extra?.department,
    manager: extra?.managerId ? { value: extra.managerId, $ref: `${baseUrl}/Users/${extra.managerId}` } : undefined,
  });
  const name = compact({ ...asObject(stored.name), formatted: user.name, givenName: user.givenName, familyName: user.familyName });
  const body: Resource = compact({
    schemas: Object.keys(enterprise).length > 0 ? [SCHEMA.user, SCHEMA.enterpriseUser] : [SCHEMA.user],
    id: user.id,
    externalId: extra?.externalId,
    userName: user.username,
    name: Object.keys(name).length > 0 ? name : undefined,
    ...withoutKeys(stored, ['name', 'emails', SCHEMA.enterpriseUser]),
    active: user.active,
    emails: emailsOf(user, stored.emails),
    groups: groups?.map((group) => ({ value: group.id, $ref: `${baseUrl}/Groups/${group.id}`, display: group.displayName, type: 'direct' })),
    [SCHEMA.enterpriseUser]: Object.keys(enterprise).length > 0 ? enterprise : undefined,
  });
  return withMeta(body, { resourceType: 'User', created: user.createdAt, lastModified: user.updatedAt, location: `${baseUrl}/Users/${user.id}` });
}

/**
 * The directory's emails, with the person's own address as the primary one: when an administrator
 * changed the address here, that change shows (the person's address is what applications are told).
 */
function emailsOf(user: User, stored: unknown): Resource[] | undefined {
  const emails = (Array.isArray(stored) ? stored : []).filter(isObject);
  if (user.email === null) return emails.length > 0 ? emails.map((email) => ({ ...email, primary: false })) : undefined;
  const primary = emails.findIndex((email) => email.value === user.email);
  if (primary < 0) return [{ value: user.email, type: 'work', primary: true }, ...emails.map((email) => ({ ...email, primary: false }))];
  return emails.map((email, index) => ({ ...email, primary: index === primary }));
}

/** Of `enterprise` extension attributes, those kept outside the columns. */
export function enterpriseExtras(extension: Resource | undefined): Resource {
  return extension ? withoutKeys(extension, [...ENTERPRISE_COLUMNS]) : {};
}

function compact(object: Resource): Resource {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined && value !== null && value !== '' && !(Array.isArray(value) && value.length === 0)));
}

function withoutKeys(object: Resource, keys: readonly string[]): Resource {
  return Object.fromEntries(Object.entries(object).filter(([key]) => !keys.includes(key)));
}

function asObject(value: unknown): Resource {
  return isObject(value) ? value : {};
}
