/**
 * The names the oidc-provider peer's server and its target (bench/targets/oidc-provider.mjs) both
 * derive from an index (issue 47, realistic cardinality): client ids, account ids, and the
 * bench-only prefill route. Index 0 of each is the one name used before issue 47, so the "one"
 * preset runs against exactly the clients and user it always did.
 */

export const CLIENT_SECRET = 'bench-secret-0123456789abcdef0123456789';
/** The bench user (the "one" preset) and its password; people sign in with the same password. */
export const USERNAME = 'bench';
export const PASSWORD = 'bench-password';

/** The k-th client_secret_basic client (all share CLIENT_SECRET). */
export function clientIdAt(k) {
  return k === 0 ? 'bench-client' : `bench-client-${k}`;
}

/** The k-th private_key_jwt client (all registered with the same public key). */
export function jwtClientIdAt(k) {
  return k === 0 ? 'bench-client-jwt' : `bench-client-jwt-${k}`;
}

/** The k-th person's account id: findAccount answers for any id, the sign-in form for these. */
export function personIdAt(k) {
  return `person-${k}`;
}

/** POST here (with PREFILL_SECRET_HEADER) to create records through the provider's models; see oidc-provider-prefill.mjs. */
export const PREFILL_PATH = '/bench/prefill';
export const PREFILL_SECRET_HEADER = 'x-bench-prefill-secret';
