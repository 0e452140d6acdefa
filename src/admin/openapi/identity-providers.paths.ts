import { ADMIN_ERRORS, adminError, adminJson, adminSecurity, page, PAGE_PARAMETERS } from './admin-schema.js';

const READ = adminSecurity(['admin:read', 'admin:owner']);
const WRITE = adminSecurity(['admin:owner']);
const id = { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,63}$' } };
const REFERENCE = { type: 'object', required: ['env'], properties: { env: { type: 'string', pattern: '^LATCHKEY_IDP_[A-Z0-9_]+$' } }, additionalProperties: false, description: 'The environment variable holding the secret on every instance; never the secret' };
const SETTINGS = {
  type: 'object',
  description: 'The settings of idps:create, by their snake_case names (docs/guides/identity-providers.md); a secret only as a reference',
  properties: {
    issuer: { type: 'string', format: 'uri' },
    client_id: { type: 'string' },
    client_auth: { type: 'object', properties: { method: { type: 'string', enum: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'] }, secret: REFERENCE, key: REFERENCE } },
    metadata_url: { type: 'string', format: 'uri' },
    sp_signing_key: REFERENCE,
    sp_signing_certificate: REFERENCE,
    domains: { type: 'array', items: { type: 'string' } },
  },
};
const BODY = { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' }, protocol: { type: 'string', enum: ['oidc', 'saml'] }, enabled: { type: 'boolean' }, settings: SETTINGS } };
const PROVIDER = { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' }, protocol: { type: 'string' }, enabled: { type: 'boolean' }, settings: SETTINGS, redirect_uri: { type: 'string' }, linked_people: { type: 'integer' } } };
const shown = (description: string) => ({ description, content: adminJson(PROVIDER) });
const INVALID = adminError('Invalid settings, an unknown field, a literal secret, a file, or a variable outside LATCHKEY_IDP_… (invalid_request)');
const NOT_FOUND = adminError('No such identity provider (not_found)');

/** Upstream identity providers (src/admin/system/identity-providers.controller.ts), as idps:* manage them. */
export const IDENTITY_PROVIDER_PATHS: Record<string, object> = {
  '/identity-providers': {
    get: { summary: 'The upstream identity providers, by id', security: READ, parameters: PAGE_PARAMETERS, responses: { '200': { description: 'One page', content: adminJson(page(PROVIDER)) }, ...ADMIN_ERRORS } },
    post: {
      summary: 'Add one (audited as idp.created)',
      security: WRITE,
      requestBody: { required: true, content: adminJson({ ...BODY, required: ['id', 'protocol', 'settings'] }) },
      responses: { '201': shown('Created'), '400': INVALID, '409': adminError('The id is taken (conflict)'), ...ADMIN_ERRORS },
    },
  },
  '/identity-providers/{id}': {
    get: { summary: 'One, with where the upstream sends people back and how many are linked', security: READ, parameters: [id], responses: { '200': shown('The provider'), '404': NOT_FOUND, ...ADMIN_ERRORS } },
    patch: {
      summary: 'Change what the body names; settings merge into the stored ones (audited as idp.updated)',
      security: WRITE,
      parameters: [id],
      requestBody: { required: true, content: adminJson(BODY) },
      responses: { '200': shown('Changed'), '400': INVALID, '404': NOT_FOUND, ...ADMIN_ERRORS },
    },
    delete: {
      summary: "Delete it and its people's links (audited as idp.deleted)",
      security: WRITE,
      parameters: [id],
      responses: { '200': { description: '{ deleted, links_removed }' }, '400': adminError('A client allows sign-in only through it (invalid_request)'), '404': NOT_FOUND, ...ADMIN_ERRORS },
    },
  },
};
