import { ADMIN_ERRORS, adminError, adminJson, adminSecurity } from './admin-schema.js';

const ANY = ['admin:read', 'admin:people', 'admin:clients', 'admin:owner'];
const person = [{ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }];
const role = { name: 'role', in: 'path', required: true, schema: { type: 'string', enum: ['auditor', 'helpdesk', 'client-admin', 'owner'] } };
const roles = { type: 'array', items: { type: 'string' } };

/** Who the caller is, the roles, and who the administrators are (src/admin/admin-roles.controller.ts). */
export const CORE_PATHS: Record<string, object> = {
  '/me': {
    get: {
      summary: 'Who you are: your person and roles (or your client id) and the admin scopes you may use',
      security: adminSecurity(ANY),
      responses: {
        '200': { description: 'The caller', content: adminJson({ type: 'object', properties: { actor: { type: 'string' }, user: { type: 'object' }, roles, client_id: { type: 'string' }, scopes: roles } }) },
        ...ADMIN_ERRORS,
      },
    },
  },
  '/overview': {
    get: {
      summary: "How many people, clients and live sessions there are, and the sign-ins, failures, new devices, consents and withdrawals of the last 24 hours (the admin console's dashboard): counts only",
      security: adminSecurity(ANY),
      responses: {
        '200': {
          description: 'The counts',
          content: adminJson({
            type: 'object',
            properties: {
              people: { type: 'object', properties: { total: { type: 'integer' }, active: { type: 'integer' } } },
              clients: { type: 'object', properties: { total: { type: 'integer' } } },
              sessions: { type: 'object', properties: { live: { type: 'integer' } } },
              last_24_hours: {
                type: 'object',
                description: "The audit log's events of the last 24 hours, counted",
                properties: {
                  sign_ins: { type: 'integer', description: 'user.signed_in' },
                  failed_sign_ins: { type: 'integer', description: 'user.sign_in_failed, factor.failed, passkey.sign_in_refused, upstream.sign_in_failed' },
                  new_devices: { type: 'integer', description: 'user.new_device' },
                  consents_given: { type: 'integer', description: 'consent.given' },
                  consents_withdrawn: { type: 'integer', description: 'consent.withdrawn' },
                },
              },
            },
          }),
        },
        ...ADMIN_ERRORS,
      },
    },
  },
  '/roles': {
    get: { summary: 'The administrator roles and the scope each carries', security: adminSecurity(ANY), responses: { '200': { description: 'The roles' }, ...ADMIN_ERRORS } },
  },
  '/administrators': {
    get: { summary: 'The people holding a role', security: adminSecurity(['admin:read', 'admin:owner']), responses: { '200': { description: '{ items: [{ id, username, name, roles }] }' }, ...ADMIN_ERRORS } },
  },
  '/people/{id}/roles/{role}': {
    put: {
      summary: 'Grant a role',
      security: adminSecurity(['admin:owner']),
      parameters: [...person, role],
      responses: { '201': { description: 'Granted' }, '200': { description: 'Already held' }, '400': adminError('Unknown role (invalid_request)'), '404': adminError('No such person (not_found)'), ...ADMIN_ERRORS },
    },
    delete: {
      summary: 'Remove a role',
      security: adminSecurity(['admin:owner']),
      parameters: [...person, role],
      responses: { '204': { description: 'Removed' }, '404': adminError('No such person, or the role is not held (not_found)'), '409': adminError('The last owner (conflict)'), ...ADMIN_ERRORS },
    },
  },
};
