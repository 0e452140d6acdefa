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

/** The routes a browser posts to with the session cookie: fetch-metadata cross-origin checks apply (app.setup.ts), on top of the CSRF token. */
export const PASSKEY_COOKIE_ROUTES = [PASSKEY_ROUTES.remove, PASSKEY_ROUTES.registrationOptions, PASSKEY_ROUTES.registration, PASSKEY_ROUTES.signInOptions, PASSKEY_ROUTES.signIn];

/** What a JSON ceremony endpoint answers. Errors have the data API's shape (STYLE 6). */
export interface JsonOutcome {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

export function jsonError(status: number, error: string, description: string): JsonOutcome {
  return { status, body: { error, error_description: description } };
}

/** 429 (RFC 6585 §4) with Retry-After, for an address that began too many ceremonies (CeremonyRateLimit). */
export function tooManyCeremonies(retryAfterSeconds: number): JsonOutcome {
  return { ...jsonError(429, 'too_many_requests', `Too many passkey requests. Try again in ${retryAfterSeconds} seconds.`), headers: { 'Retry-After': String(retryAfterSeconds) } };
}
