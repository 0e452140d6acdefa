/** The audit event of a wrong password at /login (auth/interaction/failed-sign-ins.ts records it). */
export const SIGN_IN_FAILED = 'user.sign_in_failed';

/**
 * The audit events that are a sign-in refused: a password, a second factor, a passkey, an upstream
 * provider's answer. One list for the admin console's dashboard (the latest of them) and the admin
 * API's overview (how many in the last 24 hours), so that the two count the same thing (issue 48).
 */
export const SIGN_IN_FAILURES: readonly string[] = [SIGN_IN_FAILED, 'factor.failed', 'passkey.sign_in_refused', 'upstream.sign_in_failed'];
