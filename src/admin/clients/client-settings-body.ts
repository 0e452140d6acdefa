import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../http/api-error.js';
import { adminBody } from '../system/admin-input.js';

/** More groups or providers than any client needs: a body past it is a mistake, refused before a lookup each. */
const MAX_NAMES = 100;

function invalid(message: string): ApiError {
  return new ApiError(400, message, { error: 'invalid_request' });
}

/** Each member given: a PUT replaces the whole setting, so a member left out would be a guess (unchanged, or its default?). */
function whole(request: FastifyRequest, fields: readonly string[]): Record<string, unknown> {
  const body = adminBody(request, fields);
  const missing = fields.filter((field) => !Object.hasOwn(body, field));
  if (missing.length > 0) throw invalid(`${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} required: this PUT replaces the whole setting (${fields.join(', ')})`);
  return body;
}

/** A list of names or ids, or null; `what` names the member in messages. */
function names(value: unknown, what: string): string[] | null {
  if (value === null) return null;
  if (!Array.isArray(value) || value.length > MAX_NAMES || !value.every((item) => typeof item === 'string' && item.length > 0 && item.length <= 256)) {
    throw invalid(`${what} must be null or a list of at most ${MAX_NAMES} non-empty strings`);
  }
  return value as string[];
}

/**
 * PUT /clients/{id}/groups: `{"groups_claim": "none" | "names" | "ids", "required_groups": [ids or
 * names] | null}`, as clients:groups' --claim and --require (null, or [], is --no-require).
 * ClientGroupSettings checks the values.
 */
export function groupSettingsFrom(request: FastifyRequest): { groupsClaim: string; requiredGroups: string[] | null } {
  const body = whole(request, ['groups_claim', 'required_groups']);
  if (typeof body.groups_claim !== 'string') throw invalid('groups_claim must be "none", "names" or "ids"');
  return { groupsClaim: body.groups_claim, requiredGroups: names(body.required_groups, 'required_groups') };
}

/**
 * PUT /clients/{id}/sign-in: `{"identity_providers": [ids] | null, "local_sign_in": true | false}`,
 * as clients:sign-in's --idp (null, or "any" as GET answers it, is --any-idp) and --local /
 * --no-local. SignInMethods checks the values.
 */
export function signInRuleFrom(request: FastifyRequest): { identityProviders: string[] | null; localSignIn: boolean } {
  const body = whole(request, ['identity_providers', 'local_sign_in']);
  if (typeof body.local_sign_in !== 'boolean') throw invalid('local_sign_in must be true or false');
  const providers = body.identity_providers === 'any' ? null : names(body.identity_providers, 'identity_providers');
  return { identityProviders: providers, localSignIn: body.local_sign_in };
}
