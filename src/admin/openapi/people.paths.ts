import { ADMIN_ERRORS, adminError, adminJson, adminSecurity, page, PAGE_PARAMETERS } from './admin-schema.js';

export const READ = adminSecurity(['admin:read', 'admin:people', 'admin:owner']);
const WRITE = adminSecurity(['admin:people', 'admin:owner']);
export const id = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };
const text = { type: ['string', 'null'] };
export const NOT_FOUND = { '404': adminError('No such person, or not a person id (not_found)') };
export const INVALID = { '400': adminError('A malformed body or query: an unknown member, a wrong type, a password or profile that breaks the rules (invalid_request)') };

const profile = {
  email: text,
  email_verified: { type: 'boolean' },
  name: text,
  given_name: text,
  family_name: text,
  require_mfa: { type: 'boolean', description: 'A second factor is required of the person' },
};
const person = {
  type: 'object',
  properties: { id: { type: 'string', format: 'uuid' }, username: { type: 'string' }, ...profile, has_password: { type: 'boolean' }, active: { type: 'boolean' }, created_at: { type: 'string', format: 'date-time' } },
};
const listed = { type: 'object', properties: { id: { type: 'string', format: 'uuid' }, username: { type: 'string' }, name: text, email: text, active: { type: 'boolean' }, created_at: { type: 'string' }, roles: { type: 'array', items: { type: 'string' } } } };
const detail = {
  ...person,
  properties: {
    ...person.properties,
    roles: { type: 'array', items: { type: 'string' } },
    factors: { type: 'object', description: 'totp { enabled, created_at, last_used_at }, recovery_codes { remaining, created_at }, passkeys [{ id, name, created_at, last_used_at, synced, blocked }]: never a secret' },
  },
};
const session = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    device: { ...text, description: 'The device it was started on, described from the User-Agent ("Firefox on Windows", "curl"; never the header); null for a session started before devices were recorded' },
    ip: { ...text, description: "The address it was started from (the client's own once TRUST_PROXY names the proxies); null for a session started before addresses were recorded" },
    created_at: { type: 'string' },
    expires_at: { type: 'string' },
    applications: { type: 'array', items: { type: 'object', properties: { client_id: { type: 'string' }, name: text, signed_in_at: { type: 'string' } } } },
  },
};
const grant = { type: 'object', properties: { client_id: { type: 'string' }, client_name: { type: 'string' }, scope: { type: 'array', items: { type: 'string' } }, granted_at: { type: 'string' }, last_active_at: text } };

const protectedTarget = { '403': adminError('The token lacks the scope (insufficient_scope); or the person holds an administrator role and only an owner may do this (forbidden)') };
const lastOwner = { '409': adminError('The last active owner (conflict)') };

/** A change to a person (here and in person-links.paths.ts): who may make it, what it answers. */
export const change = (summary: string, responses: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  summary,
  security: WRITE,
  parameters: [id, ...((extra.parameters as unknown[]) ?? [])],
  ...(extra.requestBody ? { requestBody: extra.requestBody } : {}),
  responses: { ...NOT_FOUND, ...ADMIN_ERRORS, ...protectedTarget, ...responses },
});

/** People, their factors, sessions and grants (src/admin/people/). */
export const PEOPLE_PATHS: Record<string, object> = {
  '/people': {
    get: {
      summary: 'List people by username: search (username, name, email; any case) and filter',
      security: READ,
      parameters: [
        { name: 'q', in: 'query', required: false, schema: { type: 'string', maxLength: 100 } },
        { name: 'active', in: 'query', required: false, schema: { type: 'string', enum: ['true', 'false'] } },
        { name: 'role', in: 'query', required: false, schema: { type: 'string', enum: ['auditor', 'helpdesk', 'client-admin', 'owner'] } },
        ...PAGE_PARAMETERS,
      ],
      responses: { '200': { description: 'A page of people', content: adminJson(page(listed)) }, ...INVALID, ...ADMIN_ERRORS },
    },
    post: {
      summary: 'Create a person (users:create); without a password they are invited or given one later',
      security: WRITE,
      requestBody: { required: true, content: adminJson({ type: 'object', required: ['username'], properties: { username: { type: 'string' }, password: { type: 'string' }, ...profile } }) },
      responses: { '201': { description: 'Created (Location names it)', content: adminJson(person) }, ...INVALID, '409': adminError('The username is taken (conflict)'), ...ADMIN_ERRORS },
    },
  },
  '/people/{id}': {
    get: { summary: 'A person: profile, roles and a summary of their second factors', security: READ, parameters: [id], responses: { '200': { description: 'The person', content: adminJson(detail) }, ...NOT_FOUND, ...ADMIN_ERRORS } },
    patch: change('Change the profile (users:update): a JSON merge patch (RFC 7396); null or "" clears', { '200': { description: 'The person', content: adminJson(person) }, ...INVALID }, {
      requestBody: { required: true, content: { 'application/merge-patch+json': { schema: { type: 'object', properties: profile } }, 'application/json': { schema: { type: 'object', properties: profile } } } },
    }),
    delete: change('Delete the person (users:delete): their sessions end first, back-channel logout is sent', { '204': { description: 'Deleted' }, ...lastOwner }),
  },
  '/people/{id}/password': {
    put: change('Set the password (users:set-password); every session of the person ends', { '204': { description: 'Set' }, ...INVALID }, {
      requestBody: { required: true, content: adminJson({ type: 'object', required: ['password'], properties: { password: { type: 'string' } } }) },
    }),
  },
  '/people/{id}/factors': {
    delete: change('Remove every second factor (users:mfa-reset)', { '200': { description: '{ one_time_codes_removed, recovery_codes_removed, passkeys_removed }' } }),
  },
  '/people/{id}/passkeys/{passkeyId}': {
    delete: change('Remove one passkey (users:passkey-remove)', { '204': { description: 'Removed' } }, { parameters: [{ name: 'passkeyId', in: 'path', required: true, schema: { type: 'string' } }] }),
  },
  '/people/{id}/lock': {
    put: change('Lock the person (users:deactivate): sessions end, tokens are revoked, sign-in is refused', { '200': { description: '{ active: false, sessions_ended, tokens_revoked }' }, ...lastOwner }),
    delete: change('Unlock the person (users:reactivate)', { '204': { description: 'Unlocked' } }),
  },
  '/people/{id}/invitation': {
    post: change('Email the person a link to choose their first password (users:invite); the link is never returned', {
      '202': { description: '{ email, expires_at }: the message is sent' },
      '409': adminError('The person has a password already, no address, is locked, or email is not set up (conflict)'),
    }),
  },
  '/people/{id}/sessions': {
    get: { summary: "The person's live sessions, newest first, with the applications signed in through each", security: READ, parameters: [id, ...PAGE_PARAMETERS], responses: { '200': { description: 'A page of sessions', content: adminJson(page(session)) }, ...INVALID, ...NOT_FOUND, ...ADMIN_ERRORS } },
    delete: change('End every session (users:sign-out); allowed on administrators too', { '200': { description: '{ sessions_ended }' }, '403': ADMIN_ERRORS['403'] }),
  },
  '/people/{id}/sessions/{sessionId}': {
    delete: change('End one session (back-channel logout is sent); allowed on administrators too', { '204': { description: 'Ended' }, '403': ADMIN_ERRORS['403'] }, { parameters: [{ name: 'sessionId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }] }),
  },
  '/people/{id}/grants': {
    get: { summary: 'The applications holding access to the person\'s data (their consents)', security: READ, parameters: [id, ...PAGE_PARAMETERS], responses: { '200': { description: 'A page of grants', content: adminJson(page(grant)) }, ...INVALID, ...NOT_FOUND, ...ADMIN_ERRORS } },
  },
  '/people/{id}/grants/{clientId}': {
    delete: change("Withdraw an application's access: the consent goes, that client's tokens and codes for the person are revoked", { '204': { description: 'Withdrawn' } }, {
      parameters: [{ name: 'clientId', in: 'path', required: true, schema: { type: 'string' } }],
    }),
  },
};
