import { SIGNING_ALGORITHMS } from '../../signing/signing-algorithms.js';
import { ADMIN_ERRORS, adminError, adminJson, adminSecurity, page, PAGE_PARAMETERS } from './admin-schema.js';

const READ = ['admin:read', 'admin:owner'];
const ANY = ['admin:read', 'admin:people', 'admin:clients', 'admin:owner'];

const KEY = {
  type: 'object',
  description: 'Never the private half',
  properties: {
    kid: { type: 'string' },
    alg: { type: 'string', enum: [...SIGNING_ALGORITHMS] },
    generation: { type: 'integer' },
    created_at: { type: 'string', format: 'date-time' },
    activates_at: { type: 'string', format: 'date-time', description: 'When it signs (or signed) from' },
    published_until: { type: ['string', 'null'], format: 'date-time' },
    state: { type: 'string', enum: ['next', 'signing', 'retiring', 'retired'] },
  },
};

const CHECK = {
  type: 'object',
  required: ['id', 'status', 'detail'],
  properties: { id: { type: 'string' }, status: { type: 'string', enum: ['ok', 'warn', 'fail', 'skip'] }, detail: { type: 'string' }, fix: { type: 'string' } },
};

const INSTANCE = {
  type: 'object',
  required: ['id', 'hostname', 'pid', 'version', 'node', 'started_at', 'last_seen_at', 'live'],
  properties: {
    id: { type: 'string', format: 'uuid', description: 'Taken at boot: a restart is a new instance' },
    hostname: { type: 'string' },
    pid: { type: 'integer' },
    version: { type: 'string', description: "Latchkey's version" },
    node: { type: 'string', description: "Node.js's version" },
    started_at: { type: 'string', format: 'date-time' },
    last_seen_at: { type: 'string', format: 'date-time', description: 'Its last heartbeat' },
    live: { type: 'boolean', description: 'Its last heartbeat is at most three of its INSTANCE_HEARTBEAT_SECONDS old' },
  },
};

const PURGED = {
  type: 'object',
  description: 'How many rows of each kind were deleted',
  properties: Object.fromEntries(['codes', 'tokens', 'mac_nonces', 'sessions', 'logout_deliveries', 'pushed_requests', 'jti_uses', 'idempotency_keys', 'device_authorizations', 'email_links', 'instances'].map((name) => [name, { type: 'integer' }])),
};

/** Signing keys (src/admin/system/signing-keys.controller.ts), doctor (src/doctor/doctor.controller.ts), the instances (src/admin/system/instances.controller.ts) and the purge (src/housekeeping/purge.controller.ts). */
export const SYSTEM_PATHS: Record<string, object> = {
  '/keys': {
    get: { summary: 'The signing keys and their states, as keys:list prints them', security: adminSecurity(READ), parameters: PAGE_PARAMETERS, responses: { '200': { description: 'One page', content: adminJson(page(KEY)) }, ...ADMIN_ERRORS } },
  },
  '/keys/rotation': {
    post: {
      summary: 'Rotate: a new key per algorithm (or for `alg`), published now, signing one publish lead later (keys:rotate)',
      security: adminSecurity(['admin:owner']),
      requestBody: { required: false, content: adminJson({ type: 'object', properties: { alg: { type: 'string', enum: [...SIGNING_ALGORITHMS] } }, additionalProperties: false }) },
      responses: {
        '201': { description: 'The new keys', content: adminJson({ type: 'object', properties: { items: { type: 'array', items: KEY } } }) },
        '400': adminError('An unknown alg or field (invalid_request)'),
        '409': adminError('Another rotation of the algorithm ran at the same time (conflict)'),
        ...ADMIN_ERRORS,
      },
    },
  },
  '/housekeeping/purge': {
    post: {
      summary: 'Delete expired codes, tokens, sessions and the rest now, as the CLI\'s purge does; audited as housekeeping.purged',
      security: adminSecurity(['admin:owner']),
      responses: { '200': { description: 'The counts', content: adminJson(PURGED) }, ...ADMIN_ERRORS },
    },
  },
  '/doctor': {
    get: {
      summary: "doctor's checks from this instance's environment, as doctor --json prints them (without --url's)",
      security: adminSecurity(READ),
      responses: {
        '200': { description: 'The report', content: adminJson({ type: 'object', properties: { ok: { type: 'boolean' }, failures: { type: 'integer' }, warnings: { type: 'integer' }, checks: { type: 'array', items: CHECK } } }) },
        ...ADMIN_ERRORS,
      },
    },
  },
  '/instances': {
    get: {
      summary: 'The server instances seen in the last 24 hours (at most 200), the latest started first; one that stopped gracefully is not listed',
      security: adminSecurity(ANY),
      responses: {
        '200': {
          description: 'The instances, and which one answered',
          content: adminJson({ type: 'object', required: ['items', 'answered_by'], properties: { items: { type: 'array', items: INSTANCE }, answered_by: { type: 'string', format: 'uuid' } } }),
        },
        ...ADMIN_ERRORS,
      },
    },
  },
};
