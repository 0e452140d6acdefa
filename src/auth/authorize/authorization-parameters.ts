import { CodeChallengeMethod } from '../../common/oauth.constants.js';
import { isAcr, type Acr } from '../../common/authentication-context.js';
import { InvalidRequestError, type OAuthError } from '../errors/oauth-error.js';
import { PKCE_VALUE } from '../grants/pkce.js';
import { Prompt } from './authorization-request.js';

/**
 * The authorization request's parameters that need nothing but their own value (and the
 * request's failure callback, which redirects the error to the client once it is verified):
 * prompt, max_age, acr_values and the PKCE challenge. AuthorizationRequestValidator calls them.
 */

type Query = Record<string, unknown>;
const PROMPTS = Object.values(Prompt);

/**
 * PKCE binds a code to its redeemer (RFC 7636 §1, §4.3); the implicit grant has no code and no
 * redemption, so a challenge would protect nothing. Refused rather than ignored, so that a client
 * that believes itself protected learns that it is not.
 */
export function refuseChallenge(query: Query, fail: (e: OAuthError) => never): null {
  if ((query.code_challenge ?? '') !== '' || (query.code_challenge_method ?? '') !== '') {
    fail(new InvalidRequestError('code_challenge applies to response_type=code only (RFC 7636); the implicit grant has no code to bind'));
  }
  return null;
}

/** Core §3.1.2.1: space-separated known values; none only alone. */
export function resolvePrompt(value: string | undefined, fail: (e: OAuthError) => never): Set<Prompt> {
  const values = new Set((value ?? '').split(' ').filter(Boolean));
  for (const prompt of values) {
    if (!(PROMPTS as readonly string[]).includes(prompt)) fail(new InvalidRequestError(`prompt=${prompt} is not supported (supported: ${PROMPTS.join(', ')})`));
  }
  if (values.has(Prompt.None) && values.size > 1) fail(new InvalidRequestError('prompt=none cannot be combined with another value (Core §3.1.2.1)'));
  return values as Set<Prompt>;
}

/**
 * Core §3.1.2.1 acr_values, space-separated. A level this server offers (acr_values_supported)
 * is always required, never silently passed over. Values it does not know are ignored, as Core
 * asks of a voluntary claim request (§5.5.1.1; the conformance suite's oidcc-unknown-parameters
 * sends one): the ID token's acr then says the level actually reached, never one it was not.
 */
export function resolveAcrValues(value: string | undefined): Acr[] | undefined {
  const known = (value ?? '').split(' ').filter(isAcr);
  return known.length > 0 ? known : undefined;
}

/** Core §3.1.2.1: a non-negative number of seconds. */
export function resolveMaxAge(value: string | undefined, fail: (e: OAuthError) => never): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^[0-9]{1,9}$/.test(value)) fail(new InvalidRequestError('max_age must be a non-negative number of seconds'));
  return Number(value);
}

/** RFC 7636 §4.3, §4.4.1; only S256 (RFC 9700 §2.1.1); public clients must use it. */
export function resolveChallenge(query: Query, isPublic: boolean, fail: (e: OAuthError) => never): string | null {
  const challenge = (query.code_challenge as string | undefined) || undefined;
  const method = (query.code_challenge_method as string | undefined) || undefined;
  if (challenge === undefined) {
    if (method !== undefined) fail(new InvalidRequestError('code_challenge_method was sent without code_challenge'));
    if (isPublic) fail(new InvalidRequestError('PKCE is required: send code_challenge with code_challenge_method=S256'));
    return null;
  }
  if (method !== CodeChallengeMethod.S256) {
    fail(new InvalidRequestError('code_challenge_method must be S256; the plain method is not supported'));
  }
  if (!PKCE_VALUE.test(challenge)) fail(new InvalidRequestError('code_challenge must be 43 to 128 characters of [A-Z a-z 0-9 - . _ ~]'));
  return challenge;
}
