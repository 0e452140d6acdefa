import type { ValidateFunction } from 'ajv';
import { ClientAuthMethod, GrantType, TokenType } from '../common/oauth.constants.js';
import { createAjv, describeSchemaErrors } from '../collections/json-schema-validator.js';
import { DomainError } from '../common/domain-error.js';
import { DESCRIPTIVE_FIELDS, type DescriptiveMetadata, type NewClient } from './client-information.js';
import { isStorableJson } from '../common/storable-text.js';
import { CLIENT_KEY_METADATA_SCHEMA, type ClientKeyMetadata } from './client-keys.js';
import { OPENID_METADATA_SCHEMA, type OpenIdClientMetadata } from './openid-client-settings.js';

/** RFC 7591 §2: the client metadata Latchkey understands. Anything else is ignored, as §2 requires. */
const METADATA_SCHEMA = {
  type: 'object',
  properties: {
    redirect_uris: { type: 'array', items: { type: 'string', maxLength: 2000 }, maxItems: 20 },
    client_name: { type: 'string', minLength: 1, maxLength: 200 },
    grant_types: { type: 'array', items: { type: 'string', maxLength: 64 }, maxItems: 10 },
    response_types: { type: 'array', items: { type: 'string', maxLength: 64 }, maxItems: 10 },
    token_endpoint_auth_method: { type: 'string', maxLength: 64 },
    scope: { type: 'string', maxLength: 1000 },
    client_id: { type: 'string', maxLength: 64 },
    client_secret: { type: 'string', maxLength: 200 },
    // A Latchkey extension: which access token type the client receives (draft-ietf-oauth-v2-http-mac).
    access_token_type: { type: 'string', maxLength: 16 },
    client_uri: { type: 'string', maxLength: 2000 },
    logo_uri: { type: 'string', maxLength: 2000 },
    policy_uri: { type: 'string', maxLength: 2000 },
    tos_uri: { type: 'string', maxLength: 2000 },
    // OpenID Connect Dynamic Client Registration 1.0 §2 and the logout specifications.
    ...OPENID_METADATA_SCHEMA,
    // RFC 7591 §2 jwks / jwks_uri and Dynamic Registration §2: a private_key_jwt client's keys.
    ...CLIENT_KEY_METADATA_SCHEMA,
  },
} as const;

// Compiled on first use, not when the module loads: most CLI commands and many requests never
// validate a registration, and compiling costs a CLI call a tenth of its start-up (issue 49).
let compiled: ValidateFunction | undefined;
const validator = (): ValidateFunction => (compiled ??= createAjv().compile(METADATA_SCHEMA));

/** Every metadata field Latchkey reads (clients:apply refuses others: in a file under version control a misspelt field is a mistake, not an extension). */
export const CLIENT_METADATA_FIELDS: readonly string[] = Object.keys(METADATA_SCHEMA.properties);
const AUTH_METHODS = new Set<string>(Object.values(ClientAuthMethod));
const TOKEN_TYPES = new Set<string>(Object.values(TokenType));

export interface ParsedMetadata {
  client: NewClient;
  clientId?: string;
  clientSecret?: string;
}

/** The OpenID metadata a request carries, or undefined when it carries none (the client then has every default). */
function openIdMetadataIn(body: Record<string, unknown>): OpenIdClientMetadata | undefined {
  const fields = Object.keys(OPENID_METADATA_SCHEMA).filter((field) => body[field] !== undefined);
  return fields.length === 0 ? undefined : (Object.fromEntries(fields.map((field) => [field, body[field]])) as OpenIdClientMetadata);
}

/**
 * Client metadata of a registration or update request, checked strictly (RFC 7591 §2, §3.2.2):
 * types, supported values, and grant and response types that agree with each other. Redirect
 * URIs and scopes are then checked by ClientsService like every other registration.
 */
export function parseClientMetadata(body: Record<string, unknown>): ParsedMetadata {
  const validate = validator();
  if (!validate(body)) throw new DomainError('invalid_client_metadata', describeSchemaErrors(validate.errors));
  if (!isStorableJson(body)) throw new DomainError('invalid_client_metadata', 'Text must be valid Unicode without NUL characters.');
  const metadata = body as { redirect_uris?: string[]; client_name?: string; grant_types?: string[]; response_types?: string[]; token_endpoint_auth_method?: string; scope?: string; client_id?: string; client_secret?: string; access_token_type?: string } & DescriptiveMetadata;

  // §2: grant_types defaults to authorization_code, response_types to code.
  const grantTypes = metadata.grant_types ?? [GrantType.AuthorizationCode];
  const unknownGrants = grantTypes.filter((g) => !(Object.values(GrantType) as string[]).includes(g));
  if (unknownGrants.length > 0) throw new DomainError('invalid_client_metadata', `Unsupported grant_types: ${unknownGrants.join(', ')}.`);
  // §2.1: response types that agree with the grant types (checked with every registration's rules, ClientsService).
  const responseTypes = metadata.response_types;
  const method = metadata.token_endpoint_auth_method ?? ClientAuthMethod.ClientSecretBasic;
  if (!AUTH_METHODS.has(method)) throw new DomainError('invalid_client_metadata', `Unsupported token_endpoint_auth_method "${method}"; use ${[...AUTH_METHODS].join(', ')}.`);

  const accessTokenType = metadata.access_token_type ?? TokenType.Bearer;
  if (!TOKEN_TYPES.has(accessTokenType)) throw new DomainError('invalid_client_metadata', `Unsupported access_token_type "${accessTokenType}"; use ${[...TOKEN_TYPES].join(' or ')}.`);

  return {
    client: {
      name: metadata.client_name ?? 'Unnamed application',
      redirectUris: metadata.redirect_uris ?? [],
      scope: metadata.scope,
      isPublic: method === ClientAuthMethod.None,
      grantTypes: grantTypes as GrantType[],
      responseTypes,
      tokenEndpointAuthMethod: method as ClientAuthMethod,
      accessTokenType: accessTokenType as TokenType,
      descriptive: Object.fromEntries(DESCRIPTIVE_FIELDS.filter((field) => metadata[field] !== undefined).map((field) => [field, metadata[field]])),
      openId: openIdMetadataIn(body),
      keys: Object.fromEntries(Object.keys(CLIENT_KEY_METADATA_SCHEMA).filter((field) => body[field] !== undefined).map((field) => [field, body[field]])) as ClientKeyMetadata,
    },
    clientId: metadata.client_id,
    clientSecret: metadata.client_secret,
  };
}
