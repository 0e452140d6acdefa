import { SIGNING_ALGORITHMS } from '../../signing/signing-algorithms.js';
import { ADMIN_ERRORS, adminError, adminJson, adminSecurity, page, PAGE_PARAMETERS } from './admin-schema.js';

const READ = ['admin:read', 'admin:owner'];

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

/** Signing keys (src/admin/system/signing-keys.controller.ts) and doctor (src/doctor/doctor.controller.ts). */
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
};
