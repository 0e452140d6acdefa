/** The console's paths, in one place: its routes and the links and redirects between them. */
export const CONSOLE = '/admin';
export const SIGN_IN_PATH = '/admin/sign-in';
export const SIGN_OUT_PATH = '/admin/sign-out';

/** A console page: /admin and below, printable ASCII, no dot segments, no doubled slash (which a browser reads as another host). */
const CONSOLE_PAGE = /^\/admin(?:\/[A-Za-z0-9\-._~%!$&'()*+,;=:@/]*)?(?:\?[\x21-\x7E]*)?$/;
/** Where a sign-in must not come back to: the sign-in itself, whose answer it is. */
const NOT_AFTER_SIGN_IN = /^\/admin\/(?:sign-in|callback|sign-out|signed-out|api)(?:[/?]|$)/;

/** `value` when it is a console page to go back to after a sign-in; undefined otherwise (never another site, never the API). */
export function consolePage(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 2000 || !CONSOLE_PAGE.test(value)) return undefined;
  if (value.includes('//') || /\/\.\.?(?:[/?]|$)/.test(value) || NOT_AFTER_SIGN_IN.test(value)) return undefined;
  return value;
}

/** The sign-in that comes back to `returnTo`; a re-authentication asks for a new sign-in. */
export function signInPath(returnTo: string, reauthenticate = false): string {
  const query = new URLSearchParams({ return_to: returnTo, ...(reauthenticate ? { reauthenticate: '1' } : {}) });
  return `${SIGN_IN_PATH}?${query}`;
}

/** An id in a console path or an admin API path. */
export function segment(id: string): string {
  return encodeURIComponent(id);
}
