import type { ProfileChanges } from '../../users/user-profile.js';
import { isObject, type Resource } from '../filter/resource-path.js';
import type { BodyAttributes } from '../resources/body-attributes.js';
import { invalid } from '../resources/value-checks.js';
import { SCHEMA } from '../scim.constants.js';
import { enterpriseExtras } from './user-representation.js';

/** A User resource as our people hold it: the person's attributes, and what scim_users keeps. */
export interface UserInput {
  userName: string;
  /** Okta sends one on create and replace; hashed under the usual rules, never kept or returned as given. */
  password?: string;
  /** Undefined when the body leaves it out: a replacement then keeps the person as active or inactive as they were. */
  active?: boolean;
  profile: Required<Pick<ProfileChanges, 'email' | 'name' | 'givenName' | 'familyName'>>;
  externalId: string | null;
  employeeNumber: string | null;
  department: string | null;
  managerId: string | null;
  /** The other attributes, keyed as in the representation. */
  attributes: Resource;
}

/**
 * Maps a User's attributes (RFC 7643 §4.1) onto a person: `userName` is the username, `name.formatted`
 * the full name (or `displayName` when there is no formatted name), `name.givenName` and `familyName`
 * theirs, and the primary email (else the first "work" one, else the first) the address.
 */
export function userInput({ core, extensions }: BodyAttributes): UserInput {
  const { userName, password, active, externalId, name, emails, ...rest } = core;
  if (typeof userName !== 'string' || userName.trim() === '') throw invalid('userName is required');
  const names = isObject(name) ? name : {};
  const list = Array.isArray(emails) ? emails.filter(isObject) : [];
  const primary = list.find((email) => email.primary === true) ?? list.find((email) => email.type === 'work') ?? list[0];
  // RFC 7643 §2.4: at most one value is primary.
  if (list.filter((email) => email.primary === true).length > 1) throw invalid('At most one of emails is primary');
  const enterprise = extensions[SCHEMA.enterpriseUser];
  const manager = enterprise?.manager;
  const extras = enterpriseExtras(enterprise);
  const attributes: Resource = { ...rest };
  const { formatted, givenName, familyName, ...otherNames } = names;
  if (Object.keys(otherNames).length > 0) attributes.name = otherNames;
  if (list.length > 0) attributes.emails = list;
  if (Object.keys(extras).length > 0) attributes[SCHEMA.enterpriseUser] = extras;
  return {
    userName: userName.trim(),
    ...(typeof password === 'string' ? { password } : {}),
    ...(typeof active === 'boolean' ? { active } : {}),
    profile: {
      email: typeof primary?.value === 'string' ? primary.value : null,
      name: stringOrNull(formatted) ?? stringOrNull(rest.displayName),
      givenName: stringOrNull(givenName),
      familyName: stringOrNull(familyName),
    },
    externalId: stringOrNull(externalId),
    employeeNumber: stringOrNull(enterprise?.employeeNumber),
    department: stringOrNull(enterprise?.department),
    managerId: isObject(manager) ? stringOrNull(manager.value) : null,
    attributes,
  };
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}
