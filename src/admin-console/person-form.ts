import { formFlag, formText, type FieldProblem, type FieldRule } from './console-forms.js';

/**
 * The console's person forms (issue 48): adding a person and editing their profile, read from a
 * posted body and turned into the admin API's requests (POST /people, a merge patch for PATCH
 * /people/{id}). The rules are the API's (the CLI's too); the console adds only what a form alone
 * can say: an invitation needs an address.
 */

/** Where the API's messages about people go (src/users/user-profile.ts, users.service.ts word them). */
export const PERSON_FIELD_RULES: readonly FieldRule[] = [
  { field: 'username', matches: /^username\b|^A user named /i },
  { field: 'email', matches: /^email\b/ },
  { field: 'given_name', matches: /^givenName\b|^given_name\b/ },
  { field: 'family_name', matches: /^familyName\b|^family_name\b/ },
  { field: 'name', matches: /^name\b/ },
];

/** The add-a-person form as typed, kept to show again beside a refusal. */
export interface NewPersonForm {
  username: string;
  name: string;
  email: string;
  invite: boolean;
}

export function newPersonForm(body: Record<string, unknown> | undefined): NewPersonForm {
  return { username: formText(body?.username, 200), name: formText(body?.name, 400), email: formText(body?.email, 400), invite: body === undefined ? true : formFlag(body.invite) };
}

/** POST /people's body (no password: the person chooses one from the invitation, or is given one later), or what the form itself can say is missing. */
export function creationOf(form: NewPersonForm): { body: Record<string, unknown> } | { problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  if (form.username.trim() === '') problems.push({ field: 'username', message: 'Give the person a username.' });
  if (form.invite && form.email.trim() === '') problems.push({ field: 'email', message: 'An invitation is sent by email: give an address, or untick the invitation.' });
  if (problems.length > 0) return { problems };
  return { body: { username: form.username.trim(), ...given('name', form.name), ...given('email', form.email) } };
}

/** The profile form: the attributes PATCH /people/{id} changes that a form edits (email_verified follows the verification email). */
export interface ProfileForm {
  name: string;
  given_name: string;
  family_name: string;
  email: string;
  require_mfa: boolean;
}

/** The form filled from the person as the API shows them (GET /people/{id}). */
export function profileFormOf(person: Record<string, unknown>): ProfileForm {
  const value = (member: string) => (typeof person[member] === 'string' ? (person[member] as string) : '');
  return { name: value('name'), given_name: value('given_name'), family_name: value('family_name'), email: value('email'), require_mfa: person.require_mfa === true };
}

export function profileForm(body: Record<string, unknown> | undefined): ProfileForm {
  return { name: formText(body?.name, 400), given_name: formText(body?.given_name, 200), family_name: formText(body?.family_name, 200), email: formText(body?.email, 400), require_mfa: formFlag(body?.require_mfa) };
}

/**
 * A JSON merge patch (RFC 7396) of what the form changed, and nothing else: an attribute left as it
 * was is not sent, so a change made meanwhile by someone else stands; a field emptied is null
 * (cleared). Empty when nothing changed.
 */
export function profilePatch(current: ProfileForm, form: ProfileForm): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  for (const member of ['name', 'given_name', 'family_name', 'email'] as const) {
    const next = form[member].trim();
    if (next !== current[member]) patch[member] = next === '' ? null : next;
  }
  if (form.require_mfa !== current.require_mfa) patch.require_mfa = form.require_mfa;
  return patch;
}

function given(member: string, value: string): Record<string, string> {
  return value.trim() === '' ? {} : { [member]: value.trim() };
}
