import { DomainError } from '../common/domain-error.js';
import { ACR_VALUES_SUPPORTED, isAcr, type Acr } from '../common/authentication-context.js';
import { DEFAULT_SIGNING_ALGORITHM, isSigningAlgorithm, SIGNING_ALGORITHMS, type SigningAlgorithm } from '../signing/signing-algorithms.js';
import { absoluteUriProblem, redirectUriProblem } from './redirect-uri.policy.js';

/** OpenID Connect Core §8: the sub a client sees: the same for every client, or one per sector. */
export const SubjectType = { Public: 'public', Pairwise: 'pairwise' } as const;
export type SubjectType = (typeof SubjectType)[keyof typeof SubjectType];

/**
 * A client's OpenID Connect settings (Dynamic Client Registration 1.0 §2, RP-Initiated Logout
 * §3.1, Back-Channel Logout §2.2), kept together in one column: none of them is looked up by.
 */
export interface OpenIdClientSettings {
  idTokenSignedResponseAlg: SigningAlgorithm;
  subjectType: SubjectType;
  /** Core §8.1: an https URL listing the client's redirect URIs; its host is the client's sector. */
  sectorIdentifierUri: string | null;
  postLogoutRedirectUris: string[];
  backchannelLogoutUri: string | null;
  backchannelLogoutSessionRequired: boolean;
  /** Core §3.1.2.1 max_age for requests that send none; null: no default. */
  defaultMaxAge: number | null;
  /** auth_time is always in our ID tokens; kept so the registration reads back as sent. */
  requireAuthTime: boolean;
  /**
   * Dynamic Registration §2 default_acr_values: the levels (authentication-context.ts) asked for
   * when a request names none; a default, which a request's acr_values replace (the floor is the
   * client's minimum_acr column). Optional in the stored JSON: rows written before it existed ask for nothing.
   */
  defaultAcrValues?: Acr[];
  /**
   * RFC 9126 §6: the client's authorization requests are accepted only when pushed (/par) first,
   * so that nothing in the browser can change them. Optional in the stored JSON: rows written
   * before it existed read as false.
   */
  requirePushedAuthorizationRequests?: boolean;
  /**
   * RFC 9449 §5.2: the client's token requests must carry a DPoP proof, so every access token it
   * gets is DPoP-bound. Optional in the stored JSON, like the PAR requirement.
   */
  dpopBoundAccessTokens?: boolean;
  /** The FAPI 2.0 Security Profile (security-profile.ts) when "fapi2"; absent: the default. */
  securityProfile?: 'fapi2';
  /**
   * Whether the client's ID tokens carry the claims their scopes grant (Core §5.4; id-token.issuer.ts),
   * or only the ones about the authentication (false: a minimal ID token, the claims at userinfo).
   * Absent: the server's ID_TOKEN_CLAIMS (default true). An ID token issued without an access token
   * (response_type=id_token) always carries them, as Core §5.4 requires.
   */
  idTokenClaims?: boolean;
}

export const DEFAULT_OPENID_SETTINGS: Readonly<OpenIdClientSettings> = {
  idTokenSignedResponseAlg: DEFAULT_SIGNING_ALGORITHM,
  subjectType: SubjectType.Public,
  sectorIdentifierUri: null,
  postLogoutRedirectUris: [],
  backchannelLogoutUri: null,
  backchannelLogoutSessionRequired: false,
  defaultMaxAge: null,
  requireAuthTime: false,
  requirePushedAuthorizationRequests: false,
  dpopBoundAccessTokens: false,
};

/** The metadata under its wire names (RFC 7591 §2 style), as registered and as shown back. */
export interface OpenIdClientMetadata {
  id_token_signed_response_alg?: string;
  subject_type?: string;
  sector_identifier_uri?: string;
  post_logout_redirect_uris?: string[];
  backchannel_logout_uri?: string;
  backchannel_logout_session_required?: boolean;
  default_max_age?: number;
  require_auth_time?: boolean;
  default_acr_values?: string[];
  /** A Latchkey extension: the weakest level any request gets (Client.minimumAcr, kept in its own column); absent: no floor. */
  minimum_acr?: string;
  require_pushed_authorization_requests?: boolean;
  dpop_bound_access_tokens?: boolean;
  /** A Latchkey extension: "fapi2" holds the client to the FAPI 2.0 Security Profile; "default" otherwise. */
  security_profile?: string;
  /** A Latchkey extension: false for a minimal ID token (profile and email claims at userinfo only); absent: the server's default. */
  id_token_claims?: boolean;
}

export const OPENID_METADATA_SCHEMA = {
  id_token_signed_response_alg: { type: 'string', maxLength: 16 },
  subject_type: { type: 'string', maxLength: 16 },
  sector_identifier_uri: { type: 'string', maxLength: 2000 },
  post_logout_redirect_uris: { type: 'array', items: { type: 'string', maxLength: 2000 }, maxItems: 20 },
  backchannel_logout_uri: { type: 'string', maxLength: 2000 },
  backchannel_logout_session_required: { type: 'boolean' },
  default_max_age: { type: 'integer', minimum: 0, maximum: 100_000_000 },
  require_auth_time: { type: 'boolean' },
  default_acr_values: { type: 'array', items: { type: 'string', maxLength: 64 }, maxItems: 10 },
  minimum_acr: { type: 'string', maxLength: 64 },
  require_pushed_authorization_requests: { type: 'boolean' },
  dpop_bound_access_tokens: { type: 'boolean' },
  security_profile: { type: 'string', maxLength: 16 },
  id_token_claims: { type: 'boolean' },
} as const;

const invalid = (message: string): DomainError => new DomainError('invalid_client_metadata', message);

/**
 * Checks OpenID metadata and returns the settings; what is absent takes its default (a registration
 * update replaces the whole registration, RFC 7592 §2.2). Throws invalid_client_metadata for what
 * we do not support, rather than ignoring it: a client that asks for HS256 ID tokens must not
 * believe it gets them.
 */
export function openIdSettingsFrom(metadata: OpenIdClientMetadata, redirectUris: readonly string[]): OpenIdClientSettings {
  const alg = metadata.id_token_signed_response_alg ?? DEFAULT_SIGNING_ALGORITHM;
  if (!isSigningAlgorithm(alg)) throw invalid(`Unsupported id_token_signed_response_alg "${alg}"; use ${SIGNING_ALGORITHMS.join(', ')}.`);
  const subjectType = metadata.subject_type ?? SubjectType.Public;
  if (subjectType !== SubjectType.Public && subjectType !== SubjectType.Pairwise) throw invalid(`Unsupported subject_type "${subjectType}"; use public or pairwise.`);
  const sectorIdentifierUri = metadata.sector_identifier_uri ?? null;
  if (sectorIdentifierUri !== null) {
    // Core §8.1 / Dynamic Registration §5: an https URL; its content is checked by SectorIdentifierVerifier.
    const uri = absoluteUriProblem(sectorIdentifierUri);
    if ('problem' in uri || uri.scheme !== 'https' || sectorIdentifierUri.includes('#')) throw invalid(`sector_identifier_uri ${JSON.stringify(sectorIdentifierUri)} must be an https URL without a fragment.`);
  }
  // Core §8.1: without a sector_identifier_uri, the sector is the redirect URIs' host, so there must be one.
  if (subjectType === SubjectType.Pairwise && sectorIdentifierUri === null && sectorOf(redirectUris) === undefined) {
    throw invalid('A pairwise client needs redirect_uris on one host, or a sector_identifier_uri (its sector, Core §8.1).');
  }
  const postLogoutRedirectUris = [...new Set(metadata.post_logout_redirect_uris ?? [])];
  for (const uri of postLogoutRedirectUris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw invalid(`post_logout_redirect_uris: ${JSON.stringify(uri)} ${problem}.`);
  }
  const profile = metadata.security_profile ?? 'default';
  if (profile !== 'default' && profile !== 'fapi2') throw invalid(`Unsupported security_profile "${profile}"; use default or fapi2.`);
  const backchannel = metadata.backchannel_logout_uri ?? null;
  if (backchannel !== null) {
    // Back-Channel Logout §2.2: an absolute http(s) URL without a fragment; https outside loopback development.
    const problem = redirectUriProblem(backchannel) ?? (/^https?:/i.test(backchannel) ? undefined : 'must be an http or https URL');
    if (problem) throw invalid(`backchannel_logout_uri ${JSON.stringify(backchannel)} ${problem}.`);
  }
  const defaultAcrValues = [...new Set(metadata.default_acr_values ?? [])];
  for (const acr of defaultAcrValues) if (!isAcr(acr)) throw invalid(`Unsupported default_acr_values entry ${JSON.stringify(acr)}; use ${ACR_VALUES_SUPPORTED.join(', ')}.`);
  return {
    idTokenSignedResponseAlg: alg,
    subjectType,
    sectorIdentifierUri,
    postLogoutRedirectUris,
    backchannelLogoutUri: backchannel,
    backchannelLogoutSessionRequired: metadata.backchannel_logout_session_required ?? false,
    defaultMaxAge: metadata.default_max_age ?? null,
    requireAuthTime: metadata.require_auth_time ?? false,
    ...(defaultAcrValues.length > 0 ? { defaultAcrValues: defaultAcrValues as Acr[] } : {}),
    requirePushedAuthorizationRequests: metadata.require_pushed_authorization_requests ?? false,
    dpopBoundAccessTokens: metadata.dpop_bound_access_tokens ?? false,
    ...(profile === 'fapi2' ? { securityProfile: profile } : {}),
    ...(metadata.id_token_claims !== undefined ? { idTokenClaims: metadata.id_token_claims } : {}),
  };
}

/** The client's floor from its metadata `minimum_acr` (a level this server offers), or null when none is registered. */
export function minimumAcrFrom(metadata: OpenIdClientMetadata | undefined): Acr | null {
  const floor = metadata?.minimum_acr;
  if (floor === undefined) return null;
  if (!isAcr(floor)) throw invalid(`Unsupported minimum_acr ${JSON.stringify(floor)}; use ${ACR_VALUES_SUPPORTED.join(', ')}.`);
  return floor;
}

/** The settings under their wire names; defaults are shown too, so a client sees what it gets. */
export function openIdMetadataOf(settings: OpenIdClientSettings): OpenIdClientMetadata {
  return {
    id_token_signed_response_alg: settings.idTokenSignedResponseAlg,
    subject_type: settings.subjectType,
    ...(settings.sectorIdentifierUri !== null ? { sector_identifier_uri: settings.sectorIdentifierUri } : {}),
    ...(settings.postLogoutRedirectUris.length > 0 ? { post_logout_redirect_uris: settings.postLogoutRedirectUris } : {}),
    ...(settings.backchannelLogoutUri !== null
      ? { backchannel_logout_uri: settings.backchannelLogoutUri, backchannel_logout_session_required: settings.backchannelLogoutSessionRequired }
      : {}),
    ...(settings.defaultMaxAge !== null ? { default_max_age: settings.defaultMaxAge } : {}),
    ...(settings.requireAuthTime ? { require_auth_time: true } : {}),
    ...(settings.defaultAcrValues?.length ? { default_acr_values: [...settings.defaultAcrValues] } : {}),
    require_pushed_authorization_requests: settings.requirePushedAuthorizationRequests ?? false,
    dpop_bound_access_tokens: settings.dpopBoundAccessTokens ?? false,
    security_profile: settings.securityProfile ?? 'default',
    // Shown only when the client chose: absent, it follows the server's ID_TOKEN_CLAIMS.
    ...(settings.idTokenClaims !== undefined ? { id_token_claims: settings.idTokenClaims } : {}),
  };
}

/** A client's sector (Core §8.1): the host of its sector_identifier_uri, or else the one host of its redirect URIs. */
export function sectorOfClient(redirectUris: readonly string[], settings: OpenIdClientSettings): string | undefined {
  if (settings.sectorIdentifierUri) return new URL(settings.sectorIdentifierUri).host.toLowerCase();
  return sectorOf(redirectUris);
}

/** The one host of a client's http(s) redirect URIs (its sector, Core §8.1), or undefined when they have several or none. */
export function sectorOf(redirectUris: readonly string[]): string | undefined {
  const hosts = new Set(redirectUris.map((uri) => absoluteUriProblem(uri)).map((parts) => ('problem' in parts ? undefined : parts.host)));
  const [host] = hosts;
  return hosts.size === 1 && host ? host : undefined;
}
