import { ADMIN_ERRORS, adminError, adminJson, adminSecurity, page, PAGE_PARAMETERS } from './admin-schema.js';

const READ = adminSecurity(['admin:read', 'admin:owner']);
const WRITE = adminSecurity(['admin:owner']);
const id = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };
const REF = { type: 'object', required: ['type', 'id'], properties: { type: { type: 'string', enum: ['user', 'group'] }, id: { type: 'string', format: 'uuid' } } };
const GROUP = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    display_name: { type: 'string' },
    external_id: { type: ['string', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};
const SHOWN = { ...GROUP, properties: { ...GROUP.properties, members: { type: 'array', items: { ...REF, properties: { ...REF.properties, name: { type: ['string', 'null'] } } } } } };
const shown = (description: string) => ({ description, content: adminJson(SHOWN) });
const INVALID = adminError('A malformed name, external id or member, an unknown field, or a cycle (invalid_request)');
const NOT_FOUND = adminError('No such group, or a member that is neither a person nor a group (not_found)');

/** Groups (src/admin/system/groups.controller.ts), as groups:* manage them. */
export const GROUP_PATHS: Record<string, object> = {
  '/groups': {
    get: { summary: 'The groups, by name', security: READ, parameters: PAGE_PARAMETERS, responses: { '200': { description: 'One page', content: adminJson(page(GROUP)) }, ...ADMIN_ERRORS } },
    post: {
      summary: 'Create a group (audited as group.created)',
      security: WRITE,
      requestBody: { required: true, content: adminJson({ type: 'object', required: ['display_name'], properties: { display_name: { type: 'string' }, external_id: { type: ['string', 'null'] }, members: { type: 'array', items: REF } } }) },
      responses: { '201': shown('Created, with its members'), '400': INVALID, '404': NOT_FOUND, '409': adminError('The name is taken (conflict)'), ...ADMIN_ERRORS },
    },
  },
  '/groups/{id}': {
    get: { summary: 'A group with its direct members', security: READ, parameters: [id], responses: { '200': shown('The group'), '404': NOT_FOUND, ...ADMIN_ERRORS } },
    patch: {
      summary: 'Rename it, or set or clear its external id (audited as group.updated)',
      security: WRITE,
      parameters: [id],
      requestBody: { required: true, content: adminJson({ type: 'object', properties: { display_name: { type: 'string' }, external_id: { type: ['string', 'null'] } } }) },
      responses: { '200': shown('Changed'), '400': INVALID, '404': NOT_FOUND, '409': adminError('The name is taken (conflict)'), ...ADMIN_ERRORS },
    },
    delete: { summary: 'Delete it (audited as group.deleted)', security: WRITE, parameters: [id], responses: { '204': { description: 'Deleted' }, '404': NOT_FOUND, ...ADMIN_ERRORS } },
  },
  '/groups/{id}/members': {
    post: {
      summary: 'Add members; those in already stay (audited as group.members_changed)',
      security: WRITE,
      parameters: [id],
      requestBody: { required: true, content: adminJson({ type: 'object', required: ['members'], properties: { members: { type: 'array', minItems: 1, items: REF } } }) },
      responses: { '200': shown('The group with its members'), '400': INVALID, '404': NOT_FOUND, ...ADMIN_ERRORS },
    },
  },
  '/groups/{id}/members/{type}/{member}': {
    delete: {
      summary: 'Remove one member; one not in is no error (audited as group.members_changed when it was in)',
      security: WRITE,
      parameters: [id, { name: 'type', in: 'path', required: true, schema: { type: 'string', enum: ['user', 'group'] } }, { name: 'member', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
      responses: { '204': { description: 'Not a member (any more)' }, '400': INVALID, '404': NOT_FOUND, ...ADMIN_ERRORS },
    },
  },
};
