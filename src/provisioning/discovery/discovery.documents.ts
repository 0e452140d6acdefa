import type { Resource } from '../filter/resource-path.js';
import type { SchemaDefinition } from '../schema/attribute.js';
import { ALL_SCHEMAS, GROUP_RESOURCE, USER_RESOURCE, type ResourceTypeDefinition } from '../schema/resource-types.js';
import { SCHEMA } from '../scim.constants.js';

/** RFC 7643 §5: what this service provider supports, as connectors read it before provisioning. */
export function serviceProviderConfig(baseUrl: string, maxResults: number): Resource {
  return {
    schemas: [SCHEMA.serviceProviderConfig],
    documentationUri: 'https://www.rfc-editor.org/rfc/rfc7644',
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults },
    // A password is taken on create and replace (hashed), never through the password-change flow.
    changePassword: { supported: false },
    sort: { supported: true },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'OAuth Bearer Token',
        description: 'A client_credentials access token with the scope "scim" (RFC 6750)',
        specUri: 'https://www.rfc-editor.org/rfc/rfc6750',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${baseUrl}/ServiceProviderConfig` },
  };
}

export const RESOURCE_TYPES: ResourceTypeDefinition[] = [USER_RESOURCE, GROUP_RESOURCE];

/** RFC 7643 §6. */
export function resourceTypeDocument(type: ResourceTypeDefinition, baseUrl: string): Resource {
  return {
    schemas: [SCHEMA.resourceType],
    id: type.name,
    name: type.name,
    endpoint: type.endpoint,
    description: type.description,
    schema: type.core.id,
    ...(type.extensions.length === 0 ? {} : { schemaExtensions: type.extensions.map((extension) => ({ schema: extension.id, required: false })) }),
    meta: { resourceType: 'ResourceType', location: `${baseUrl}/ResourceTypes/${type.name}` },
  };
}

/** RFC 7643 §7. */
export function schemaDocument(schema: SchemaDefinition, baseUrl: string): Resource {
  return { schemas: [SCHEMA.schema], ...schema, meta: { resourceType: 'Schema', location: `${baseUrl}/Schemas/${schema.id}` } };
}

export { ALL_SCHEMAS };
