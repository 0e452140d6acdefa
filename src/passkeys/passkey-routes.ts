/** The passkey endpoints: the account page, its forms and JSON ceremony endpoints, and the sign-in's. */
export const PASSKEY_ROUTES = {
  account: '/account/passkeys',
  remove: '/account/passkeys/remove',
  registrationOptions: '/account/passkeys/registration/options',
  registration: '/account/passkeys/registration',
  signInOptions: '/login/passkey/options',
  signIn: '/login/passkey',
  browserLibrary: '/assets/simplewebauthn-browser.js',
  script: '/assets/passkeys.js',
} as const;

/** What a JSON ceremony endpoint answers. Errors have the data API's shape (STYLE 6). */
export interface JsonOutcome {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

export function jsonError(status: number, error: string, description: string): JsonOutcome {
  return { status, body: { error, error_description: description } };
}

/** A time as the passkey pages and answers show it: to the minute, in UTC. */
export function shownTime(date: Date): string {
  return date.toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
}

/** Why a passkey is blocked, as the account page shows it and the sign-in answer says it. */
export function blockedNotice(since: Date): string {
  return `a copy of this passkey was detected on ${shownTime(since)}`;
}

/** 429 (RFC 6585 §4) with Retry-After, for an address that began too many ceremonies (CeremonyRateLimit). */
export function tooManyCeremonies(retryAfterSeconds: number): JsonOutcome {
  return { ...jsonError(429, 'too_many_requests', `Too many passkey requests. Try again in ${retryAfterSeconds} seconds.`), headers: { 'Retry-After': String(retryAfterSeconds) } };
}
