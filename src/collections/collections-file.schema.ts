/**
 * The shape of the collections file itself, checked with Ajv before anything else so that a typo
 * stops start-up with a message naming the exact place (docs/reference/collections.md).
 */
export const COLLECTIONS_FILE_SCHEMA = {
  type: 'object',
  required: ['collections'],
  additionalProperties: false,
  properties: {
    $comment: { type: 'string' },
    collections: {
      type: 'object',
      minProperties: 1,
      // Lower-case plural nouns: they become path segments and scope names (`notes:read`).
      propertyNames: { pattern: '^[a-z][a-z0-9-]{0,48}s$' },
      additionalProperties: {
        type: 'object',
        required: ['schema'],
        additionalProperties: false,
        properties: {
          description: { type: 'string', maxLength: 200 },
          schema: {
            type: 'object',
            required: ['type', 'properties'],
            properties: {
              type: { const: 'object' },
              properties: {
                type: 'object',
                minProperties: 1,
                // Attribute names are used in JSON paths and index names: keep them plain.
                propertyNames: { pattern: '^[A-Za-z][A-Za-z0-9_]{0,62}$' },
              },
              additionalProperties: { const: false },
            },
          },
          writable: { type: 'array', items: { type: 'string' }, uniqueItems: true },
          filterable: { type: 'array', items: { type: 'string' }, uniqueItems: true },
          sortable: { type: 'array', items: { type: 'string' }, uniqueItems: true },
        },
      },
    },
  },
} as const;
