import { isEmail } from 'class-validator';

/** A form body as Fastify parsed it: anything, field by field. */
export type EmailForm = Record<string, unknown> | undefined;

/** A field's text, or '' when absent or not text (a repeated field arrives as an array). */
export function field(form: EmailForm, name: string): string {
  const value = form?.[name];
  return typeof value === 'string' ? value : '';
}

/** An address as the users' profile accepts it (users/user-profile.ts), trimmed; null when it is not one. */
export function emailAddress(value: string): string | null {
  const email = value.trim();
  return email.length <= 254 && isEmail(email, { allow_display_name: false, require_tld: false }) ? email : null;
}

export const sameAddress = (a: string | null, b: string | null): boolean => a !== null && b !== null && a.toLowerCase() === b.toLowerCase();

/** The two password fields of a form, or why not: the rules themselves are UsersService's (NIST SP 800-63B §5.1.1.2). */
export function newPassword(form: EmailForm): { password: string } | { error: string } {
  const password = field(form, 'password');
  if (password === '') return { error: 'Enter a new password.' };
  if (password !== field(form, 'password_confirm')) return { error: 'The two passwords are not the same.' };
  return { password };
}
