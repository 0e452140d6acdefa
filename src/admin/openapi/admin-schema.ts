/** Pieces every admin API path fragment shares (src/admin/openapi/*.paths.ts). */

export const adminJson = (schema: unknown) => ({ 'application/json': { schema } });

export const adminError = (description: string) => ({ description, content: adminJson({ $ref: '#/components/schemas/Error' }) });

/** The refusals every admin route can answer (AdminAccess, the exception filter). */
export const ADMIN_ERRORS = {
  '401': adminError('No token, or an invalid, expired or revoked one (unauthorized, invalid_token)'),
  '403': adminError('The token lacks a permitting admin scope, or the person no longer holds the role (insufficient_scope); or the target is an owner\'s to change (forbidden)'),
};

/** `security` of an operation any of whose scopes permits it. */
export const adminSecurity = (scopes: readonly string[]) => scopes.map((scope) => ({ oauth2: [scope] }));

/** The paging parameters of every admin list, and the page's shape: links as fields. */
export const PAGE_PARAMETERS = [
  { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } },
  { name: 'cursor', in: 'query', required: false, description: 'From `next` of the previous page', schema: { type: 'string' } },
];

export const page = (items: unknown) => ({
  type: 'object',
  required: ['items', 'next'],
  properties: { items: { type: 'array', items }, next: { type: ['string', 'null'], format: 'uri', description: 'The next page, or null on the last one' } },
});
