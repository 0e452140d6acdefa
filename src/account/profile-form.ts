import { isEmail } from 'class-validator';
import type { User } from '../users/user.entity.js';
import type { ProfileChanges } from '../users/user-profile.js';

/** A form body as Fastify parsed it: anything, field by field. */
export type AccountForm = Record<string, unknown> | undefined;

/** A field's text, or '' when absent or not text (a repeated field arrives as an array). */
export function field(form: AccountForm, name: string): string {
  const value = form?.[name];
  return typeof value === 'string' ? value : '';
}

/** What the profile form shows again when it is refused: the values typed, and what to fix in each field. */
export interface ProfileFormState {
  values: { name: string; email: string };
  errors: { name?: string; email?: string };
}

/** The limits of users/user-profile.ts (OpenID Connect Core §5.1 claims), said for people. */
const NAME_MAX = 200;
const EMAIL_MAX = 254;
/** Control characters and the line and paragraph separators: a name shown on pages and in ID tokens holds none. */
const CONTROL = /[\p{Cc}\u2028\u2029]/u;

/**
 * The profile form, checked on the server: the name (empty clears it) and, where the address
 * changes here (`emailEditable`: without email set up; with it, /account/email confirms a new
 * address from it first), the email (empty clears it; a new one is unconfirmed). Either the changes
 * and the names of what changed (for the audit event, never the values), or the form again with
 * what to fix in each field; nothing is stored on a refusal.
 */
export function readProfileForm(form: AccountForm, user: User, emailEditable: boolean): { changes: ProfileChanges; changed: string[] } | ProfileFormState {
  // A field left out keeps its value; one sent twice (an array) is refused rather than guessed at.
  const sent = (key: string, current: string | null): string | null => (form?.[key] === undefined ? (current ?? '') : typeof form[key] === 'string' ? form[key].trim() : null);
  const name = sent('name', user.name);
  const email = emailEditable ? sent('email', user.email) : (user.email ?? '');
  const errors: ProfileFormState['errors'] = {};
  if (name === null || name.length > NAME_MAX || CONTROL.test(name)) errors.name = `Enter your name in at most ${NAME_MAX} characters, on one line.`;
  if (email === null || (email !== '' && (email.length > EMAIL_MAX || !isEmail(email, { allow_display_name: false, require_tld: false })))) errors.email = 'Enter an email address, such as name@example.com, or leave the field empty.';
  if (name === null || email === null || errors.name !== undefined || errors.email !== undefined) return { values: { name: field(form, 'name').slice(0, NAME_MAX * 2), email: field(form, 'email').slice(0, EMAIL_MAX * 2) }, errors };
  const changes: ProfileChanges = {};
  if ((name === '' ? null : name) !== user.name) changes.name = name === '' ? null : name;
  if (emailEditable && (email === '' ? null : email) !== user.email) changes.email = email === '' ? null : email;
  return { changes, changed: Object.keys(changes) };
}

export function isRefused(read: ReturnType<typeof readProfileForm>): read is ProfileFormState {
  return 'errors' in read;
}
