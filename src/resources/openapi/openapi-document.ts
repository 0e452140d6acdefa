import { DocumentBuilder, type OpenAPIObject } from '@nestjs/swagger';
import type { Collection } from '../../collections/collection.js';
import { COLLECTION_METHODS } from '../collection.controller.js';
import { ITEM_METHODS } from '../item.controller.js';
import { API_VERSION } from '../items/resource-links.js';

type Operation = Record<string, unknown>;

const ERROR_SCHEMA = {
  type: 'object',
  required: ['error', 'error_description'],
  properties: { error: { type: 'string', example: 'invalid_request' }, error_description: { type: 'string' } },
};

const json = (schema: unknown) => ({ 'application/json': { schema } });
const error = (description: string) => ({ description, content: json({ $ref: '#/components/schemas/Error' }) });
const COMMON_ERRORS = {
  '400': error('Malformed request (invalid_request)'),
  '401': error('Missing, invalid, expired or revoked token (unauthorized, invalid_token)'),
  '403': error('The token lacks the scope (insufficient_scope)'),
  '404': error('No such collection or item (not_found)'),
  '406': error('Accept excludes application/json (not_acceptable)'),
};

/**
 * The OpenAPI 3 document of the REST API, built from the collections file: one path pair per
 * collection, with the item schema as declared, the bearer scheme and the OAuth authorization
 * code flow (with the scopes the consent page shows). OpenAPI 3.1, whose schemas are JSON Schema
 * 2020-12: the dialect the collection schemas are written in.
 */
export function buildOpenApiDocument(issuer: string, collections: Collection[], scopes: Record<string, string>): OpenAPIObject {
  const base = new DocumentBuilder()
    .setTitle('Latchkey data API')
    .setDescription(
      'Items of the collections declared in the collections file. Obtain an access token with the authorization code flow ' +
        '(PKCE) and send it as `Authorization: Bearer <token>` (a client registered for MAC tokens signs each request instead: ' +
        '`Authorization: MAC id="…", ts="…", nonce="…", mac="…"`, draft-ietf-oauth-v2-http-mac). `<collection>:read` opens GET, HEAD and OPTIONS; ' +
        '`<collection>:write` opens POST, PUT, PATCH and DELETE. Errors are `{ "error", "error_description" }`.',
    )
    .setOpenAPIVersion('3.1.0')
    .setVersion(API_VERSION)
    .addServer(`${issuer}/api/v${API_VERSION}`)
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'An access token from /token (RFC 6750)' }, 'bearer')
    .addSecurity('mac', { type: 'http', scheme: 'mac', description: 'A MAC token from /token, each request signed with its mac_key (draft-ietf-oauth-v2-http-mac-02)' })
    .addOAuth2({ type: 'oauth2', flows: { authorizationCode: { authorizationUrl: `${issuer}/authorize`, tokenUrl: `${issuer}/token`, scopes } } }, 'oauth2')
    .build();

  const paths: Record<string, Record<string, Operation>> = {};
  const schemas: Record<string, unknown> = { Error: ERROR_SCHEMA };
  for (const collection of collections) {
    const name = schemaName(collection.name);
    schemas[`${name}Attributes`] = collection.schema;
    schemas[name] = {
      allOf: [
        {
          type: 'object',
          required: ['id', 'createdAt', 'updatedAt'],
          properties: {
            id: { type: 'string', format: 'uuid', readOnly: true },
            createdAt: { type: 'string', format: 'date-time', readOnly: true },
            updatedAt: { type: 'string', format: 'date-time', readOnly: true },
          },
        },
        { $ref: `#/components/schemas/${name}Attributes` },
      ],
    };
    const security = (scope: string) => [{ bearer: [] }, { mac: [] }, { oauth2: [scope] }];
    const item = { $ref: `#/components/schemas/${name}` };
    const attributes = { $ref: `#/components/schemas/${name}Attributes` };
    const read = { tags: [collection.name], security: security(collection.readScope) };
    const write = { tags: [collection.name], security: security(collection.writeScope) };
    const idParameter = [{ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }];
    const itemResponse = (description: string) => ({ description, headers: { ETag: { schema: { type: 'string' } } }, content: json(item) });
    const ifMatch = { name: 'If-Match', in: 'header', required: false, schema: { type: 'string' }, description: 'ETag of the version being changed; 412 when stale' };
    const stale = { '412': error('Stale If-Match (precondition_failed)') };
    const idempotencyKey = {
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      schema: { type: 'string', maxLength: 257 },
      description: 'draft-ietf-httpapi-idempotency-key-header: a retry with the same key gets the first answer for 24 h; 422 with another body, 409 while the first is in flight',
    };
    const idempotencyErrors = { '409': error('The same Idempotency-Key is in flight (conflict)'), '422': error('The Idempotency-Key was used with another request (unprocessable_entity)') };

    paths[`/${collection.name}`] = {
      get: {
        ...read,
        summary: `List ${collection.name}`,
        parameters: listParameters(collection),
        responses: { '200': { description: `A page of ${collection.name}; the next page is in the Link header (rel="next")`, content: json({ type: 'array', items: item }) }, ...COMMON_ERRORS },
      },
      post: {
        ...write,
        summary: `Create one of ${collection.name}`,
        parameters: [idempotencyKey],
        requestBody: { required: true, content: json(attributes) },
        responses: { '201': itemResponse('Created; Location names the new item'), ...COMMON_ERRORS, '415': error('Not application/json (unsupported_media_type)'), ...idempotencyErrors },
      },
      options: { ...read, summary: `Allowed methods (${COLLECTION_METHODS}) and writable attributes`, responses: { '200': { description: 'Allow header and attribute schemas' } } },
    };
    paths[`/${collection.name}/{id}`] = {
      get: { ...read, summary: `Read one of ${collection.name}`, parameters: idParameter, responses: { '200': itemResponse('The item'), '304': { description: 'Not modified (If-None-Match)' }, ...COMMON_ERRORS } },
      put: { ...write, summary: 'Replace the item (all attributes)', parameters: [...idParameter, ifMatch], requestBody: { required: true, content: json(attributes) }, responses: { '200': itemResponse('The complete item'), ...COMMON_ERRORS, ...stale } },
      patch: {
        ...write,
        summary: 'Change some attributes (JSON Merge Patch, RFC 7396)',
        parameters: [...idParameter, ifMatch, idempotencyKey],
        requestBody: { required: true, content: { 'application/merge-patch+json': { schema: { type: 'object' } }, 'application/json': { schema: { type: 'object' } } } },
        responses: { '200': itemResponse('The complete item'), ...COMMON_ERRORS, ...stale, ...idempotencyErrors },
      },
      delete: { ...write, summary: 'Delete the item', parameters: [...idParameter, ifMatch], responses: { '204': { description: 'Deleted' }, ...COMMON_ERRORS, ...stale } },
      options: { ...read, summary: `Allowed methods (${ITEM_METHODS}) and writable attributes`, parameters: idParameter, responses: { '200': { description: 'Allow header and attribute schemas' } } },
    };
  }
  return { ...base, paths, components: { ...base.components, schemas } } as OpenAPIObject;
}

function listParameters(collection: Collection): Record<string, unknown>[] {
  const attributes = [...collection.attributes.values()];
  const filters = attributes
    .filter((a) => a.filterable)
    .map((a) => {
      const isArray = a.kind === 'string-array';
      return { name: a.name, in: 'query', required: false, description: isArray ? 'Items whose array contains this value' : 'Equality filter', schema: isArray ? a.schema.items : a.schema };
    });
  const sortable = ['id', 'createdAt', ...attributes.filter((a) => a.sortable).map((a) => a.name)];
  return [
    ...filters,
    { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1 } },
    { name: 'sort', in: 'query', required: false, schema: { type: 'string', enum: sortable.flatMap((s) => [s, `-${s}`]) } },
    { name: 'cursor', in: 'query', required: false, description: 'From the Link header of the previous page', schema: { type: 'string' } },
  ];
}

/** notes → Note, photos → Photo: schema names for the generated document. */
function schemaName(collection: string): string {
  const singular = collection.endsWith('s') ? collection.slice(0, -1) : collection;
  return singular.replace(/(^|[-_])([a-z])/g, (_match, _separator, letter: string) => letter.toUpperCase());
}
