import { ADMIN_ERRORS, adminError, adminJson, adminSecurity, page, PAGE_PARAMETERS } from './admin-schema.js';

const READ = adminSecurity(['admin:read', 'admin:clients', 'admin:owner']);
const WRITE = adminSecurity(['admin:clients', 'admin:owner']);
const clientId = { name: 'id', in: 'path', required: true, schema: { type: 'string', maxLength: 64 } };
const uuid = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string', format: 'uuid' } });

/** RFC 7591 §2 client metadata, as /register takes it (src/clients/client-metadata.ts has every field). */
const metadata = {
  type: 'object',
  description: 'RFC 7591 §2 client metadata under its wire names (client_name, redirect_uris, grant_types, response_types, scope, token_endpoint_auth_method, access_token_type, client_uri, logo_uri, policy_uri, tos_uri, jwks, jwks_uri, token_endpoint_auth_signing_alg and the OpenID Connect fields); an unknown field, client_id or client_secret is refused',
  additionalProperties: true,
};
const registration = { type: 'object', description: 'The registration (RFC 7591 §3.2.1 names), never its secret', properties: { client_id: { type: 'string' }, client_name: { type: 'string' } }, additionalProperties: true };
const withSecret = { ...registration, description: 'The registration with client_secret, shown this once (confidential clients)' };
const grant = { type: 'object', properties: { person: { type: 'object' }, scope: { type: 'string' }, granted_at: { type: 'string', format: 'date-time' }, updated_at: { type: 'string', format: 'date-time' } } };
const session = {
  type: 'object',
  properties: { sid: { type: 'string' }, person: { type: 'object' }, signed_in_at: { type: 'string', format: 'date-time' }, expires_at: { type: 'string', format: 'date-time' }, client_since: { type: 'string', format: 'date-time' } },
};
const resourceServer = {
  type: 'object',
  properties: { id: { type: 'string', format: 'uuid' }, uri: { type: 'string' }, name: { type: 'string' }, access_token_format: { enum: ['opaque', 'jwt'] }, introspector: { type: ['string', 'null'] }, created_at: { type: 'string', format: 'date-time' } },
};
const FORBIDDEN_OWNER = adminError('The token lacks admin:clients or admin:owner (insufficient_scope); or the client holds an owner-only scope (an admin scope, scim) and the caller is not an owner (admin_client_protected)');
const notFound = (what: string) => adminError(`No such ${what} (not_found)`);

/** Clients, their grants and sessions, and resource servers (src/admin/clients/). */
export const CLIENTS_PATHS: Record<string, object> = {
  '/clients': {
    get: {
      summary: 'The clients, by name (clients:list)',
      security: READ,
      parameters: [
        { name: 'q', in: 'query', required: false, description: 'A piece of the client id or name, any case', schema: { type: 'string', maxLength: 200 } },
        { name: 'grant_type', in: 'query', required: false, schema: { type: 'string' } },
        { name: 'type', in: 'query', required: false, schema: { enum: ['public', 'confidential'] } },
        ...PAGE_PARAMETERS,
      ],
      responses: { '200': { description: 'A page of registrations', content: adminJson(page(registration)) }, '400': adminError('A bad filter, limit or cursor (invalid_request)'), ...ADMIN_ERRORS },
    },
    post: {
      summary: 'Register a client (clients:create); its secret is in this answer only',
      security: WRITE,
      requestBody: { required: true, content: adminJson(metadata) },
      responses: { '201': { description: 'Registered', content: adminJson(withSecret) }, '400': adminError('invalid_client_metadata, invalid_redirect_uri; an owner-only scope asked by a client administrator'), ...ADMIN_ERRORS },
    },
  },
  '/clients/{id}': {
    get: { summary: 'A client\'s registration', security: READ, parameters: [clientId], responses: { '200': { description: 'The registration', content: adminJson(registration) }, '404': notFound('client'), ...ADMIN_ERRORS } },
    patch: {
      summary: 'Change a registration: a JSON merge patch (RFC 7396) over its metadata, checked as a whole registration',
      security: WRITE,
      parameters: [clientId],
      requestBody: { required: true, content: { 'application/merge-patch+json': { schema: metadata }, 'application/json': { schema: metadata } } },
      responses: { '200': { description: 'The registration as changed', content: adminJson(registration) }, '400': adminError('invalid_client_metadata, invalid_redirect_uri'), ...ADMIN_ERRORS, '403': FORBIDDEN_OWNER, '404': notFound('client') },
    },
    delete: { summary: 'Delete a client with its codes, tokens and consents (clients:delete)', security: WRITE, parameters: [clientId], responses: { '204': { description: 'Deleted' }, ...ADMIN_ERRORS, '403': FORBIDDEN_OWNER, '404': notFound('client') } },
  },
  '/clients/{id}/secret': {
    post: {
      summary: 'Issue a new secret (clients:rotate-secret): shown in this answer only; the old one is refused at once',
      security: WRITE,
      parameters: [clientId],
      responses: { '200': { description: 'The registration with its new client_secret', content: adminJson(withSecret) }, '400': adminError('A public or private_key_jwt client has no secret (invalid_request)'), ...ADMIN_ERRORS, '403': FORBIDDEN_OWNER, '404': notFound('client') },
    },
  },
  '/clients/{id}/grants': {
    get: { summary: 'The people who allowed the client access, with the scope and dates, by username', security: READ, parameters: [clientId, ...PAGE_PARAMETERS], responses: { '200': { description: 'A page of grants', content: adminJson(page(grant)) }, '404': notFound('client'), ...ADMIN_ERRORS } },
  },
  '/clients/{id}/grants/{personId}': {
    delete: {
      summary: 'Withdraw a person\'s grant: the consent, and their codes and tokens for this client, at once',
      security: WRITE,
      parameters: [clientId, uuid('personId')],
      responses: { '204': { description: 'Withdrawn' }, ...ADMIN_ERRORS, '403': FORBIDDEN_OWNER, '404': notFound('client, or no grant by that person') },
    },
  },
  '/clients/{id}/sessions': {
    get: {
      summary: 'The live sessions the client signed people in through, newest first, and how many',
      security: READ,
      parameters: [clientId, ...PAGE_PARAMETERS],
      responses: { '200': { description: '{ count, items, next }', content: adminJson({ ...page(session), properties: { ...page(session).properties, count: { type: 'integer' } } }) }, '404': notFound('client'), ...ADMIN_ERRORS },
    },
  },
  '/resource-servers': {
    get: { summary: 'The resource servers (resources:list), by name', security: READ, parameters: PAGE_PARAMETERS, responses: { '200': { description: 'A page', content: adminJson(page(resourceServer)) }, ...ADMIN_ERRORS } },
    post: {
      summary: 'Register a resource server (resources:register)',
      security: WRITE,
      requestBody: { required: true, content: adminJson({ type: 'object', required: ['uri'], properties: { uri: { type: 'string' }, name: { type: 'string' }, access_token_format: { enum: ['opaque', 'jwt'] }, introspector: { type: 'string' } } }) },
      responses: { '201': { description: 'Registered', content: adminJson(resourceServer) }, '400': adminError('A bad URI, format or introspector, or one registered already (invalid_request)'), ...ADMIN_ERRORS },
    },
  },
  '/resource-servers/{id}': {
    delete: { summary: 'Remove a resource server (resources:delete)', security: WRITE, parameters: [uuid('id')], responses: { '204': { description: 'Removed' }, '404': notFound('resource server'), ...ADMIN_ERRORS } },
  },
};
