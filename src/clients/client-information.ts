import { randomBytes } from 'node:crypto';
import { DomainError } from '../common/domain-error.js';
import { ClientAuthMethod, GrantType, ResponseType, TokenType } from '../common/oauth.constants.js';
import type { Client } from './client.entity.js';
import { clientKeyMetadataOf, type ClientJwks, type ClientKeyMetadata } from './client-keys.js';
import { openIdMetadataOf, type OpenIdClientMetadata } from './openid-client-settings.js';

export interface NewClient {
  name: string;
  redirectUris: string[];
  scope?: string;
  /** A public client has no secret and must use PKCE (RFC 6749 §2.1, RFC 9700 §2.1.1). */
  isPublic?: boolean;
  grantTypes?: GrantType[];
  /** client_secret_basic (default), client_secret_post or private_key_jwt for confidential clients. */
  tokenEndpointAuthMethod?: ClientAuthMethod;
  /** The type of access token the client receives: bearer (default) or mac. */
  accessTokenType?: TokenType;
  /** Descriptive metadata (RFC 7591 §2): https URLs of the client's home page, logo, privacy policy and terms. */
  descriptive?: DescriptiveMetadata;
  /** RFC 7591 §2 response_types; absent: those the grant types imply (responseTypesOf). `id_token` only so. */
  responseTypes?: string[];
  /** OpenID Connect metadata under its wire names; absent: every default. */
  openId?: OpenIdClientMetadata;
  /** A private_key_jwt client's keys (jwks or jwks_uri) and assertion algorithm, under their wire names. */
  keys?: ClientKeyMetadata;
}

/** RFC 7591 §2 descriptive metadata, under its wire names. */
export interface DescriptiveMetadata {
  client_uri?: string;
  logo_uri?: string;
  policy_uri?: string;
  tos_uri?: string;
}

export const DESCRIPTIVE_FIELDS = ['client_uri', 'logo_uri', 'policy_uri', 'tos_uri'] as const;

/** RFC 7591 §3.2.1 client information response. */
export interface ClientView {
  client_id: string;
  client_secret?: string;
  client_secret_expires_at?: number;
  client_name: string;
  redirect_uris: string[];
  scope: string;
  grant_types: GrantType[];
  response_types: string[];
  token_endpoint_auth_method: ClientAuthMethod;
  /** A Latchkey extension of RFC 7591 §2: "bearer" or "mac". */
  access_token_type: TokenType;
  client_id_issued_at: number;
  client_uri?: string;
  logo_uri?: string;
  policy_uri?: string;
  tos_uri?: string;
  id_token_signed_response_alg?: string;
  subject_type?: string;
  post_logout_redirect_uris?: string[];
  backchannel_logout_uri?: string;
  backchannel_logout_session_required?: boolean;
  default_max_age?: number;
  require_auth_time?: boolean;
  default_acr_values?: string[];
  /** A Latchkey extension: the client's floor (Client.minimumAcr). */
  minimum_acr?: string;
  require_pushed_authorization_requests?: boolean;
  dpop_bound_access_tokens?: boolean;
  security_profile?: string;
  id_token_claims?: boolean;
  jwks?: ClientJwks;
  jwks_uri?: string;
  token_endpoint_auth_signing_alg?: string;
  /** A Latchkey extension (issue 46): Client.groupsClaim and Client.requiredGroups, when set. */
  groups?: { claim: string; required_groups: string[] };
}

/**
 * 128 random bits, base64url, starting with a letter or digit: an id starting with "-" reads as
 * an option to the CLI (and to most command lines), so `--client-id -x…` failed 1 time in 64.
 */
export function newClientId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (/^[A-Za-z0-9]/.test(id)) return id;
  }
}

/** The entity's columns for descriptive metadata: what is absent is cleared (RFC 7592 §2.2 replaces the whole registration). */
export function descriptiveColumns(metadata: DescriptiveMetadata = {}): Pick<Client, 'clientUri' | 'logoUri' | 'policyUri' | 'tosUri'> {
  return { clientUri: metadata.client_uri ?? null, logoUri: metadata.logo_uri ?? null, policyUri: metadata.policy_uri ?? null, tosUri: metadata.tos_uri ?? null };
}

/** RFC 7591 §2.1: `code` goes with authorization_code, `token` with implicit: what a client registered without response_types has. */
export function responseTypesOf(grantTypes: readonly GrantType[]): ResponseType[] {
  return [
    ...(grantTypes.includes(GrantType.AuthorizationCode) ? [ResponseType.Code] : []),
    ...(grantTypes.includes(GrantType.Implicit) ? [ResponseType.Token] : []),
  ];
}

/** The response types a client may ask /authorize for: the ones it registered, or those its grant types imply. */
export function responseTypesOfClient(client: Pick<Client, 'grantTypes' | 'responseTypes'>): ResponseType[] {
  return client.responseTypes ?? responseTypesOf(client.grantTypes);
}

const RESPONSE_TYPES = new Set<string>(Object.values(ResponseType));

/**
 * RFC 7591 §2.1 and OpenID Connect Dynamic Registration §2: response types that agree with the
 * grant types: `code` with authorization_code, and `token` or `id_token` with implicit, each only
 * with its grant. Throws invalid_client_metadata otherwise; returns them without repeats.
 */
export function checkedResponseTypes(grantTypes: readonly GrantType[], responseTypes: readonly string[]): ResponseType[] {
  if (responseTypes.some((r) => !RESPONSE_TYPES.has(r))) throw new DomainError('invalid_client_metadata', 'The supported response_types are "code", "token" and "id_token".');
  if (responseTypes.includes(ResponseType.Code) !== grantTypes.includes(GrantType.AuthorizationCode)) {
    throw new DomainError('invalid_client_metadata', 'response_types "code" and grant_types "authorization_code" must be registered together.');
  }
  const implicitResponse = responseTypes.includes(ResponseType.Token) || responseTypes.includes(ResponseType.IdToken);
  if (implicitResponse !== grantTypes.includes(GrantType.Implicit)) {
    throw new DomainError('invalid_client_metadata', 'response_types "token" or "id_token" and grant_types "implicit" must be registered together.');
  }
  return [...new Set(responseTypes)] as ResponseType[];
}

/** RFC 7591 §3.2.1 / RFC 7592 §3: what a client's registration reads back as; the secret only when just issued. */
export function clientView(client: Client, secret?: string): ClientView {
  return {
    client_id: client.id,
    ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
    client_name: client.name,
    redirect_uris: client.redirectUris,
    scope: client.scope,
    grant_types: client.grantTypes,
    response_types: responseTypesOfClient(client),
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    access_token_type: client.accessTokenType,
    client_id_issued_at: Math.floor(client.createdAt.getTime() / 1000),
    ...(client.clientUri ? { client_uri: client.clientUri } : {}),
    ...(client.logoUri ? { logo_uri: client.logoUri } : {}),
    ...(client.policyUri ? { policy_uri: client.policyUri } : {}),
    ...(client.tosUri ? { tos_uri: client.tosUri } : {}),
    ...clientKeyMetadataOf(client),
    // RFC 7591 §3.2.1: every registered value, what the server provisioned included: the OpenID defaults too (Dynamic Registration §3.2).
    ...openIdMetadataOf(client.openId),
    ...(client.minimumAcr ? { minimum_acr: client.minimumAcr } : {}),
    // A Latchkey extension (issue 45): how the client's people may sign in, when an administrator restricted it.
    ...(client.signInRule ? { sign_in: { identity_providers: client.signInRule.identityProviders ?? 'any', local_sign_in: client.signInRule.localSignIn } } : {}),
    // A Latchkey extension (issue 46): the groups claim it receives and the groups its people must be in, when an administrator set them.
    ...((client.groupsClaim ?? 'none') !== 'none' || client.requiredGroups ? { groups: { claim: client.groupsClaim ?? 'none', required_groups: client.requiredGroups ?? [] } } : {}),
  };
}
