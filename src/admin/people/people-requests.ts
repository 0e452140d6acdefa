import type { FastifyRequest } from 'fastify';
import { validate as isUuid } from 'uuid';
import { ApiError } from '../../http/api-error.js';
import { jsonObjectBody } from '../../http/content-negotiation.js';
import type { ProfileChanges } from '../../users/user-profile.js';
import { isAdminRole, ADMIN_ROLES } from '../../scopes/admin-scopes.js';
import type { AdminCursor } from '../admin-paging.js';
import type { NewPerson } from './account-administration.service.js';
import type { PeopleFilter } from './people-search.store.js';

/**
 * The admin API's people requests read into the services' terms (issue 48). Anything malformed
 * is a 400 invalid_request naming the member, never a silent default: an unknown member too, so a
 * misspelt attribute is not taken for "leave it as it is".
 */

const JSON_ONLY = ['application/json'];
/** RFC 7396 §4 registers application/merge-patch+json for PATCH; plain JSON is accepted too, as the data API does. */
const PATCH_TYPES = ['application/merge-patch+json', 'application/json'];
const Q_MAX = 100;

function invalid(description: string): ApiError {
  return new ApiError(400, description, { error: 'invalid_request' });
}

/** GET /people's filters: q, active=true|false, role=<administrator role>. */
export function parsePeopleFilter(query: Record<string, unknown>): PeopleFilter {
  const filter: PeopleFilter = {};
  if (query.q !== undefined) {
    if (typeof query.q !== 'string' || query.q.trim() === '' || query.q.length > Q_MAX) throw invalid(`q must be 1 to ${Q_MAX} characters`);
    filter.q = query.q.trim();
  }
  if (query.active !== undefined) {
    if (query.active !== 'true' && query.active !== 'false') throw invalid('active must be true or false');
    filter.active = query.active === 'true';
  }
  if (query.role !== undefined) {
    if (typeof query.role !== 'string' || !isAdminRole(query.role)) throw invalid(`role must be one of ${Object.keys(ADMIN_ROLES).join(', ')}`);
    filter.role = query.role;
  }
  return filter;
}

/** A sessions page's position: the last session's created_at and public id, as sessionView gave them. */
export function sessionPosition(cursor: AdminCursor | null): { createdAt: Date; publicId: string } | null {
  if (cursor === null) return null;
  const createdAt = new Date(cursor.value);
  if (Number.isNaN(createdAt.getTime()) || !isUuid(cursor.id)) throw invalid('The cursor is not one this server issued: follow the next link of the previous page');
  return { createdAt, publicId: cursor.id };
}

const PROFILE_MEMBERS = {
  email: { key: 'email', kind: 'text' },
  name: { key: 'name', kind: 'text' },
  given_name: { key: 'givenName', kind: 'text' },
  family_name: { key: 'familyName', kind: 'text' },
  email_verified: { key: 'emailVerified', kind: 'flag' },
  require_mfa: { key: 'requireMfa', kind: 'flag' },
} as const satisfies Record<string, { key: keyof ProfileChanges; kind: 'text' | 'flag' }>;

/** Profile members of a body: text attributes take a string or null (cleared, as RFC 7396 reads null), flags a boolean. */
function profileOf(body: Record<string, unknown>, allowed: readonly string[]): ProfileChanges {
  const changes: Record<string, unknown> = {};
  for (const [member, value] of Object.entries(body)) {
    if (allowed.includes(member)) continue;
    const known = (PROFILE_MEMBERS as Record<string, { key: string; kind: 'text' | 'flag' }>)[member];
    if (!known) throw invalid(`Unknown member "${member}"; a person has ${[...allowed, ...Object.keys(PROFILE_MEMBERS)].join(', ')}`);
    if (known.kind === 'flag' && typeof value !== 'boolean') throw invalid(`${member} must be true or false`);
    if (known.kind === 'text' && value !== null && typeof value !== 'string') throw invalid(`${member} must be a string, or null to clear it`);
    // An empty string clears too, as the CLI's '' does.
    changes[known.key] = value === '' ? null : value;
  }
  return changes as ProfileChanges;
}

/** POST /people: a username, an optional password, the profile. */
export function parseNewPerson(request: FastifyRequest): NewPerson {
  const body = jsonObjectBody(request, JSON_ONLY);
  if (typeof body.username !== 'string') throw invalid('username is required, as a string');
  if (body.password !== undefined && typeof body.password !== 'string') throw invalid('password must be a string (or left out: the person is then invited or given one later)');
  return { username: body.username, password: body.password as string | undefined, profile: profileOf(body, ['username', 'password']) };
}

/** PATCH /people/{id}: a merge patch of the profile (username and password are not in it). */
export function parseProfilePatch(request: FastifyRequest): ProfileChanges {
  const changes = profileOf(jsonObjectBody(request, PATCH_TYPES), []);
  if (Object.keys(changes).length === 0) throw invalid(`The patch changes nothing; a person has ${Object.keys(PROFILE_MEMBERS).join(', ')}`);
  return changes;
}

/** PUT /people/{id}/password: `{ "password": "…" }`. */
export function parsePassword(request: FastifyRequest): string {
  const body = jsonObjectBody(request, JSON_ONLY);
  const extra = Object.keys(body).filter((member) => member !== 'password');
  if (extra.length > 0) throw invalid(`Unknown member "${extra[0]}"; send { "password": "…" }`);
  if (typeof body.password !== 'string') throw invalid('password is required, as a string');
  return body.password;
}

/** POST /people/{id}/upstream-links: `{ "identity_provider": "contoso", "subject": "…" }` (the upstream's sub, or its SAML NameID). */
export function parseUpstreamLink(request: FastifyRequest): { idpId: string; subject: string } {
  const body = jsonObjectBody(request, JSON_ONLY);
  const extra = Object.keys(body).filter((member) => member !== 'identity_provider' && member !== 'subject');
  if (extra.length > 0) throw invalid(`Unknown member "${extra[0]}"; send { "identity_provider": "…", "subject": "…" }`);
  if (typeof body.identity_provider !== 'string' || body.identity_provider === '') throw invalid('identity_provider is required: the id of an identity provider');
  if (typeof body.subject !== 'string' || body.subject === '') throw invalid("subject is required: the person's subject at that provider (its sub, or SAML NameID)");
  return { idpId: body.identity_provider, subject: body.subject };
}
