import { ADMIN_ERRORS, adminError, adminJson, adminSecurity, page, PAGE_PARAMETERS } from './admin-schema.js';
import { READ } from './people.paths.js';

const text = { type: ['string', 'null'] };
const publicId = { name: 'publicId', in: 'path', required: true, description: 'The id the list gives the session (never its cookie, nor the sid of ID tokens)', schema: { type: 'string', format: 'uuid' } };

/** Each filter given narrows the list. */
const FILTERS = [
  { name: 'person', in: 'query', required: false, schema: { type: 'string', format: 'uuid', description: "The person's sessions" } },
  { name: 'client', in: 'query', required: false, schema: { type: 'string', description: 'Sessions through which this client signed the person in (OpenID Connect sign-ins)' } },
  { name: 'ip', in: 'query', required: false, schema: { type: 'string', description: 'Started from this address; or, ending in "." or ":", from any address starting so (203.0.113. is 203.0.113.0/24)' } },
  { name: 'device', in: 'query', required: false, schema: { type: 'string', maxLength: 100, description: "Part of the device's description, in any case (firefox, iPhone); % and _ are literal" } },
  { name: 'since', in: 'query', required: false, schema: { type: 'string', format: 'date-time', description: 'Started at or after this instant (RFC 3339, with an offset)' } },
  { name: 'until', in: 'query', required: false, schema: { type: 'string', format: 'date-time', description: 'Started before this instant (RFC 3339, with an offset)' } },
];

const LIVE_SESSION = {
  type: 'object',
  required: ['id', 'person', 'device', 'ip', 'created_at', 'expires_at', 'applications'],
  properties: {
    id: { type: 'string', format: 'uuid', description: 'A random name for this API: neither the cookie, nor the hash the sessions are keyed by, nor the sid of ID tokens' },
    person: { type: 'object', properties: { id: { type: 'string', format: 'uuid' }, username: { type: 'string' } } },
    device: { ...text, description: 'The device it was started on, described from the User-Agent ("Firefox on Windows"); null for a session older than that record' },
    ip: { ...text, description: 'The address it was started from; null for a session older than that record' },
    created_at: { type: 'string', format: 'date-time' },
    expires_at: { type: 'string', format: 'date-time' },
    applications: { type: 'array', items: { type: 'object', properties: { client_id: { type: 'string' }, name: text, signed_in_at: { type: 'string', format: 'date-time' } } } },
  },
};

/** Every person's live sessions (src/admin/people/sessions.controller.ts). */
export const SESSION_PATHS: Record<string, object> = {
  '/sessions': {
    get: {
      summary: "Every person's live sessions (not ended, not expired), newest first, filtered and paged",
      security: READ,
      parameters: [...FILTERS, ...PAGE_PARAMETERS],
      responses: {
        '200': { description: 'A page of sessions', content: adminJson(page(LIVE_SESSION)) },
        '400': adminError('A malformed filter, limit or cursor, or an unknown query parameter (invalid_request)'),
        ...ADMIN_ERRORS,
      },
    },
  },
  '/sessions/{publicId}': {
    delete: {
      summary: "End one live session, whoever's it is, as DELETE /people/{id}/sessions/{sessionId} does (back-channel logout is sent; allowed on administrators too); audited as session.ended",
      security: adminSecurity(['admin:people', 'admin:owner']),
      parameters: [publicId],
      responses: { '204': { description: 'Ended' }, '404': adminError('No live session has this id (not_found)'), ...ADMIN_ERRORS },
    },
  },
};
