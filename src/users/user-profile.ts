import { isEmail } from 'class-validator';
import { DomainError } from '../common/domain-error.js';

/**
 * The profile attributes a person has (OpenID Connect Core §5.1), as an administrator sets them.
 * `undefined` leaves an attribute as it is, `null` clears it.
 */
export interface ProfileChanges {
  email?: string | null;
  emailVerified?: boolean;
  name?: string | null;
  givenName?: string | null;
  familyName?: string | null;
  /** An administrator requires a second factor of this person (issue 33): not a profile claim, set through the same update. */
  requireMfa?: boolean;
}

const LIMITS = { name: 200, givenName: 100, familyName: 100 } as const;
/** C0/C1 controls and the line and paragraph separators: no attribute shown on a page or in a token carries them. */
const CONTROL = /[\p{Cc}\u2028\u2029]/u;

/** Checks and normalizes profile changes; throws a DomainError naming the first bad attribute. */
export function validateProfile(changes: ProfileChanges): ProfileChanges {
  const checked: ProfileChanges = { ...changes };
  if (typeof changes.email === 'string') {
    const email = changes.email.trim();
    if (email.length > 254 || !isEmail(email, { allow_display_name: false, require_tld: false })) {
      throw new DomainError('invalid_profile', 'email must be an email address of at most 254 characters.');
    }
    checked.email = email;
  }
  for (const [field, limit] of Object.entries(LIMITS) as [keyof typeof LIMITS, number][]) {
    const value = changes[field];
    if (typeof value !== 'string') continue;
    const trimmed = value.trim();
    if (trimmed === '' || trimmed.length > limit || CONTROL.test(trimmed)) {
      throw new DomainError('invalid_profile', `${field} must be 1 to ${limit} characters without control characters.`);
    }
    checked[field] = trimmed;
  }
  return checked;
}
