import { ADMIN_ERRORS, adminError, adminJson, adminSecurity, page, PAGE_PARAMETERS } from './admin-schema.js';

const READERS = ['admin:read', 'admin:people', 'admin:clients', 'admin:owner'];
const text = (description: string) => ({ type: 'string', description });

/** The filters both audit routes take; each given narrows the result. */
const FILTERS = [
  { name: 'actor', in: 'query', required: false, schema: text('Who did it: cli, user:<id>, client:<id>, idp:<id>') },
  { name: 'event', in: 'query', required: false, schema: text('An event (client.registered), or every event under a prefix ending in "." (client.)') },
  { name: 'person', in: 'query', required: false, schema: { type: 'string', format: 'uuid', description: 'Events about this person (subject user:<id>)' } },
  { name: 'client', in: 'query', required: false, schema: text('Events about this client (subject client:<id>)') },
  { name: 'since', in: 'query', required: false, schema: { type: 'string', format: 'date-time', description: 'From this instant on, inclusive (RFC 3339, with an offset)' } },
  { name: 'until', in: 'query', required: false, schema: { type: 'string', format: 'date-time', description: 'Before this instant, exclusive (RFC 3339, with an offset)' } },
];

const EVENT = {
  type: 'object',
  required: ['id', 'at', 'actor', 'ip', 'action', 'subject', 'details'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    at: { type: 'string', format: 'date-time' },
    actor: { type: 'string' },
    ip: { type: ['string', 'null'], description: "The caller's address, for a change made over the admin API" },
    action: { type: 'string' },
    subject: { type: 'string' },
    details: { type: 'object', description: 'Never a secret, code or token' },
  },
};

const BAD_FILTER = adminError('A malformed filter, limit or cursor, or an unknown query parameter (invalid_request)');

/** The audit log (src/admin/system/audit-events.controller.ts). */
export const AUDIT_PATHS: Record<string, object> = {
  '/audit-events': {
    get: {
      summary: 'The audit log, newest first, filtered and paged',
      security: adminSecurity(READERS),
      parameters: [...FILTERS, ...PAGE_PARAMETERS],
      responses: { '200': { description: 'One page', content: adminJson(page(EVENT)) }, '400': BAD_FILTER, ...ADMIN_ERRORS },
    },
  },
  '/audit-events/export': {
    get: {
      summary: 'Every event matching the filters, newest first, as JSON lines (no page limit)',
      security: adminSecurity(READERS),
      parameters: FILTERS,
      responses: { '200': { description: 'One event a line', content: { 'application/x-ndjson': { schema: EVENT } } }, '400': BAD_FILTER, ...ADMIN_ERRORS },
    },
  },
};
