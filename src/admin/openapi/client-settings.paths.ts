import { ADMIN_ERRORS, adminError, adminJson, adminSecurity } from './admin-schema.js';

const READ = adminSecurity(['admin:read', 'admin:clients', 'admin:owner']);
const WRITE = adminSecurity(['admin:clients', 'admin:owner']);
const clientId = { name: 'id', in: 'path', required: true, schema: { type: 'string', maxLength: 64 } };
const FORBIDDEN_OWNER = adminError('The token lacks admin:clients or admin:owner (insufficient_scope); or a client concerned holds an owner-only scope (an admin scope, scim) and the caller is not an owner (admin_client_protected)');
const NOT_FOUND = adminError('No such client, group or identity provider (not_found)');
const names = { type: ['array', 'null'], maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 256 } };

const GROUP_SETTINGS = {
  type: 'object',
  properties: {
    client_id: { type: 'string' },
    groups_claim: { enum: ['none', 'names', 'ids'] },
    required_groups: { type: 'array', description: 'Empty: anyone may sign in', items: { type: 'object', properties: { id: { type: 'string', format: 'uuid' }, display_name: { type: ['string', 'null'] } } } },
  },
};
const SIGN_IN_RULE = {
  type: 'object',
  properties: { client_id: { type: 'string' }, identity_providers: { oneOf: [{ type: 'array', items: { type: 'string' } }, { const: 'any' }] }, local_sign_in: { type: 'boolean' } },
};
const PLAN_ENTRY = {
  type: 'object',
  properties: {
    client_id: { type: 'string' },
    client_name: { type: 'string' },
    action: { enum: ['create', 'update', 'delete', 'unchanged', 'keep'] },
    changes: { type: 'object', description: 'Each changed field with its old and new value; a secret only as "changed"' },
    note: { type: 'string', description: "Why a client left out is kept (the admin console's own)" },
  },
};
const PLAN = { type: 'object', properties: { applied: { type: 'boolean' }, summary: { type: 'object', additionalProperties: { type: 'integer' } }, plan: { type: 'array', items: PLAN_ENTRY } } };
const DECLARATION = {
  type: 'object',
  required: ['document', 'keep_unlisted'],
  additionalProperties: false,
  properties: {
    document: {
      type: 'object',
      required: ['clients'],
      description: 'As clients:apply reads it: {"clients": [RFC 7591 metadata with client_id]}; a secret only as {"env": "LATCHKEY_CLIENT_…"}',
      properties: { clients: { type: 'array', items: { type: 'object', additionalProperties: true } }, $comment: { type: 'string' } },
    },
    keep_unlisted: { type: 'boolean', description: 'false deletes the clients the document leaves out (never the admin console\'s own)' },
  },
};
const DOCUMENT_ERRORS = {
  '400': adminError('A malformed body (invalid_request); the document\'s problems, every one, each naming its client: bad metadata, a secret as a value, a file or a variable outside LATCHKEY_CLIENT_… (invalid_client_metadata)'),
  ...ADMIN_ERRORS,
  '403': FORBIDDEN_OWNER,
};

/** A client's group settings and sign-in rule, and clients as code (src/admin/clients/client-settings.controller.ts, client-declarations.controller.ts). */
export const CLIENT_SETTINGS_PATHS: Record<string, object> = {
  '/clients/{id}/groups': {
    get: { summary: "The client's groups claim and required groups (clients:groups)", security: READ, parameters: [clientId], responses: { '200': { description: 'The settings', content: adminJson(GROUP_SETTINGS) }, '404': NOT_FOUND, ...ADMIN_ERRORS } },
    put: {
      summary: 'Set both (clients:groups): the groups claim, and the groups (by id or name) whose members alone may sign in; audited as client.updated',
      security: WRITE,
      parameters: [clientId],
      requestBody: { required: true, content: adminJson({ type: 'object', required: ['groups_claim', 'required_groups'], additionalProperties: false, properties: { groups_claim: { enum: ['none', 'names', 'ids'] }, required_groups: names } }) },
      responses: { '200': { description: 'The settings as set', content: adminJson(GROUP_SETTINGS) }, '400': adminError('A missing or unknown member, a bad claim (invalid_request, invalid_client_metadata)'), ...ADMIN_ERRORS, '403': FORBIDDEN_OWNER, '404': NOT_FOUND },
    },
  },
  '/clients/{id}/sign-in': {
    get: { summary: 'How the client\'s people may sign in (clients:sign-in)', security: READ, parameters: [clientId], responses: { '200': { description: 'The rule', content: adminJson(SIGN_IN_RULE) }, '404': NOT_FOUND, ...ADMIN_ERRORS } },
    put: {
      summary: 'Set the rule (clients:sign-in): some identity providers (null or "any": every enabled one), and the local sign-in or not; audited as client.updated',
      security: WRITE,
      parameters: [clientId],
      requestBody: { required: true, content: adminJson({ type: 'object', required: ['identity_providers', 'local_sign_in'], additionalProperties: false, properties: { identity_providers: { oneOf: [names, { const: 'any' }] }, local_sign_in: { type: 'boolean' } } }) },
      responses: { '200': { description: 'The rule as set', content: adminJson(SIGN_IN_RULE) }, '400': adminError('A missing or unknown member, or no way left to sign in (invalid_request)'), ...ADMIN_ERRORS, '403': FORBIDDEN_OWNER, '404': NOT_FOUND },
    },
  },
  '/client-declarations/plan': {
    post: {
      summary: 'The plan that would make the clients match the document (clients:apply --dry-run); nothing changes',
      security: WRITE,
      requestBody: { required: true, content: adminJson(DECLARATION) },
      responses: { '200': { description: 'The plan (applied: false)', content: adminJson(PLAN) }, ...DOCUMENT_ERRORS },
    },
  },
  '/client-declarations': {
    put: {
      summary: 'Make the clients match the document (clients:apply), in one transaction: all of it or nothing',
      security: WRITE,
      requestBody: { required: true, content: adminJson(DECLARATION) },
      responses: { '200': { description: 'The plan applied (applied: true)', content: adminJson(PLAN) }, ...DOCUMENT_ERRORS },
    },
  },
};
