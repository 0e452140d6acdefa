import { DomainError } from '../common/domain-error.js';
import { isSecretReference, type SecretReference } from '../config/secret-reference.js';

/** The protocols an upstream identity provider speaks. */
export const UPSTREAM_PROTOCOL = { OpenIdConnect: 'oidc', Saml: 'saml' } as const;
export type UpstreamProtocol = (typeof UPSTREAM_PROTOCOL)[keyof typeof UPSTREAM_PROTOCOL];

/** Where our profile's attributes come from: a claim (OpenID Connect) or an attribute (SAML) name for each. */
export interface ProfileMapping {
  username: string;
  email: string;
  name: string;
  givenName: string;
  familyName: string;
}

/** What every upstream provider has, whatever its protocol. */
export interface CommonSettings {
  /** Email domains whose people this provider signs in: typing `ana@contoso.com` on the sign-in page goes there (home-realm discovery). */
  domains: string[];
  /** Create an account on a person's first sign-in (just in time); otherwise an administrator links them first (users:link). */
  createAccounts: boolean;
  /** Count the upstream's authentication methods (amr, AuthnContextClassRef) toward our acr; otherwise a required second factor is still asked here. */
  trustAuthenticationLevel: boolean;
  /** Believe the upstream's email_verified (OpenID Connect), or that its email attribute is verified (SAML); otherwise every upstream address is unverified here. */
  trustEmail: boolean;
  /** Pass the authorization request's login_hint upstream (OpenID Connect login_hint, SAML Subject NameID is not sent). */
  passLoginHint: boolean;
  /** Our sign-out also signs the person out upstream (RP-Initiated Logout, SAML Single Logout) when the upstream supports it. */
  signOutUpstream: boolean;
  mapping: ProfileMapping;
  /** How the upstream's group values find our groups: by display name, or by external id (Entra ID sends group object ids). */
  groupsMatch: GroupsMatch;
  /** Create a group the upstream names that does not exist here (by name only); otherwise only existing groups are joined. */
  groupsCreate: boolean;
}

/** How an upstream's group values are matched to our groups (issue 46). */
export const GROUPS_MATCH = { Name: 'name', ExternalId: 'external_id' } as const;
export type GroupsMatch = (typeof GROUPS_MATCH)[keyof typeof GROUPS_MATCH];

/** How we authenticate to the upstream's token endpoint; a secret or key is only ever referenced (environment or file). */
export type UpstreamClientAuth =
  | { method: 'client_secret_basic' | 'client_secret_post'; secret: SecretReference }
  | { method: 'private_key_jwt'; key: SecretReference }
  | { method: 'none' };

export interface OidcSettings extends CommonSettings {
  protocol: 'oidc';
  /** The issuer identifier; discovery reads `${issuer}/.well-known/openid-configuration` (OpenID Connect Discovery §4). */
  issuer: string;
  clientId: string;
  clientAuth: UpstreamClientAuth;
  scope: string;
  /** Also read the userinfo endpoint after the code exchange (claims the ID token does not carry); on by default. */
  userinfo: boolean;
  /** The claim (ID token or userinfo) carrying the person's groups: an array of strings or a space/comma-separated string; null: no group sync. */
  groupsClaim: string | null;
}

export interface SamlSettings extends CommonSettings {
  protocol: 'saml';
  /** The IdP's metadata document: from a URL (fetched through the outbound guard) or a file. Exactly one is set. */
  metadataUrl: string | null;
  metadataFile: string | null;
  /** The attribute holding the stable subject; null: the NameID (persistent format expected). */
  subjectAttribute: string | null;
  /**
   * Our SP's signing key (PKCS#8 PEM) and its certificate (PEM), by reference, both or neither.
   * With them our AuthnRequests and LogoutRequests are signed (SAML Bindings §3.4.4.1) and the
   * certificate is in our metadata: Single Logout at ADFS, Okta, Shibboleth and SimpleSAMLphp needs
   * a signed LogoutRequest (SAML Profiles §4.4.4.1).
   */
  spSigningKey: SecretReference | null;
  spSigningCertificate: SecretReference | null;
  /** The multi-valued attribute carrying the person's groups (Entra ID's groups claim URI, memberOf, …); null: no group sync. */
  groupsAttribute: string | null;
}

export type IdentityProviderSettings = OidcSettings | SamlSettings;

/** An identity provider as the services use it. */
export interface UpstreamProvider {
  id: string;
  displayName: string;
  enabled: boolean;
  settings: IdentityProviderSettings;
}

export const IDP_ID = /^[a-z0-9][a-z0-9-]{0,63}$/;
const COMMON_KEYS: ReadonlySet<string> = new Set<keyof CommonSettings>(['domains', 'createAccounts', 'trustAuthenticationLevel', 'trustEmail', 'passLoginHint', 'signOutUpstream', 'mapping', 'groupsMatch', 'groupsCreate']);
const OIDC_KEYS: ReadonlySet<string> = new Set<keyof OidcSettings>(['issuer', 'clientId', 'clientAuth', 'scope', 'userinfo', 'groupsClaim']);
const SAML_KEYS: ReadonlySet<string> = new Set<keyof SamlSettings>(['metadataUrl', 'metadataFile', 'subjectAttribute', 'spSigningKey', 'spSigningCertificate', 'groupsAttribute']);
/** An environment variable's name, as a secret reference names it (never a value typed by mistake). */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const CLAIM_NAME = /^[\x21-\x7E]{1,200}$/;

const OIDC_MAPPING: ProfileMapping = { username: 'preferred_username', email: 'email', name: 'name', givenName: 'given_name', familyName: 'family_name' };
/** The attribute names Entra ID, ADFS and Okta send by default (the WS-Federation claim URIs); SimpleSAMLphp and Shibboleth are configured with --attribute. */
const SAML_MAPPING: ProfileMapping = {
  username: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name',
  email: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
  name: 'http://schemas.microsoft.com/identity/claims/displayname',
  givenName: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname',
  familyName: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname',
};

export function defaultMapping(protocol: UpstreamProtocol): ProfileMapping {
  return { ...(protocol === UPSTREAM_PROTOCOL.OpenIdConnect ? OIDC_MAPPING : SAML_MAPPING) };
}

function invalid(message: string): DomainError {
  return new DomainError('invalid_identity_provider', message);
}

/** An https URL (http only for loopback hosts, as in tests and a development upstream on this machine). */
export function checkedUrl(name: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') throw invalid(`${name} is required`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid(`${name} must be an absolute URL`);
  }
  const loopback = url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]';
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) throw invalid(`${name} must be an https URL`);
  if (url.hash !== '' || url.username !== '' || url.password !== '') throw invalid(`${name} must have no fragment and no user information`);
  return value;
}

/**
 * Checks an administrator's settings and fills the defaults; throws invalid_identity_provider
 * naming the first problem. `input` holds the protocol's own settings and the common ones, as
 * IdentityProvidersService builds them from the CLI's flags.
 */
export function parseSettings(protocol: unknown, input: Partial<Record<keyof OidcSettings | keyof SamlSettings, unknown>>): IdentityProviderSettings {
  if (protocol !== UPSTREAM_PROTOCOL.OpenIdConnect && protocol !== UPSTREAM_PROTOCOL.Saml) throw invalid('protocol must be oidc or saml');
  // A setting of the other protocol would be ignored without a word (an --issuer given to a SAML provider): refused instead.
  // One given as null (idps:update --no-groups clears either protocol's groups source) sets nothing, so nothing is ignored.
  const own = protocol === UPSTREAM_PROTOCOL.Saml ? SAML_KEYS : OIDC_KEYS;
  const stray = Object.keys(input).filter((key) => key !== 'protocol' && !COMMON_KEYS.has(key) && !own.has(key) && input[key as keyof typeof input] !== null);
  if (stray.length > 0) throw invalid(`${stray.join(', ')} ${stray.length === 1 ? 'does' : 'do'} not apply to ${protocol} providers`);
  const domains = (input.domains ?? []) as unknown[];
  if (!Array.isArray(domains) || domains.some((domain) => typeof domain !== 'string' || !DOMAIN.test(domain))) throw invalid('each domain must be a lower-case DNS name (contoso.com)');
  const flag = (name: keyof CommonSettings, fallback: boolean): boolean => {
    const value = input[name];
    if (value === undefined) return fallback;
    if (typeof value !== 'boolean') throw invalid(`${name} must be true or false`);
    return value;
  };
  const mapping = { ...defaultMapping(protocol), ...((input.mapping ?? {}) as Record<string, unknown>) };
  for (const [key, value] of Object.entries(mapping)) {
    if (!(key in OIDC_MAPPING)) throw invalid(`the mapping has no attribute ${key} (one of ${Object.keys(OIDC_MAPPING).join(', ')})`);
    if (typeof value !== 'string' || !CLAIM_NAME.test(value)) throw invalid(`the mapping of ${key} must be a claim or attribute name`);
  }
  const common: CommonSettings = {
    domains: [...new Set(domains as string[])],
    createAccounts: flag('createAccounts', true),
    trustAuthenticationLevel: flag('trustAuthenticationLevel', false),
    trustEmail: flag('trustEmail', false),
    passLoginHint: flag('passLoginHint', true),
    signOutUpstream: flag('signOutUpstream', true),
    mapping: mapping as unknown as ProfileMapping,
    groupsMatch: input.groupsMatch === undefined ? GROUPS_MATCH.Name : checkedGroupsMatch(input.groupsMatch),
    groupsCreate: flag('groupsCreate', false),
  };
  // Created groups are named by the upstream's values: by external id, a group named by an opaque object id nobody could recognise.
  if (common.groupsCreate && common.groupsMatch === GROUPS_MATCH.ExternalId) throw invalid('groups_create needs groups_match name: a group created from an external id (an object id) would be named by it');
  if (protocol === UPSTREAM_PROTOCOL.Saml) return { ...common, ...parseSamlPart(input) };
  return { ...common, ...parseOidcPart(input) };
}

function parseOidcPart(input: Partial<Record<keyof OidcSettings, unknown>>): Omit<OidcSettings, keyof CommonSettings> {
  const issuer = checkedUrl('issuer', input.issuer);
  if (typeof input.clientId !== 'string' || !/^[\x21-\x7E]{1,255}$/.test(input.clientId)) throw invalid('client_id is required: the client id this server was given by the upstream');
  const scope = input.scope ?? 'openid email profile';
  if (typeof scope !== 'string' || !scope.split(' ').includes('openid') || !/^[\x21\x23-\x5B\x5D-\x7E]+( [\x21\x23-\x5B\x5D-\x7E]+)*$/.test(scope)) {
    throw invalid('scope must be space-separated scope tokens including openid (RFC 6749 §3.3)');
  }
  // Most providers (node-oidc-provider, Entra ID) put the profile at userinfo only, when an access token comes with the ID token.
  const userinfo = input.userinfo ?? true;
  if (typeof userinfo !== 'boolean') throw invalid('userinfo must be true or false');
  return { protocol: 'oidc', issuer, clientId: input.clientId, clientAuth: parseClientAuth(input.clientAuth), scope, userinfo, groupsClaim: groupsSource('groups_claim', input.groupsClaim) };
}

/** A secret reference whose environment variable is a name, not a secret typed in its place. */
function checkedReference(value: unknown, what: string): SecretReference {
  if (!isSecretReference(value)) throw invalid(`the ${what} is given by reference: an environment variable or a file, never its value`);
  if ('env' in value && !ENV_NAME.test(value.env)) throw invalid(`the ${what}'s environment variable must be a variable's name (letters, digits and _), not a value`);
  return value;
}

function parseClientAuth(value: unknown): UpstreamClientAuth {
  const auth = (value ?? { method: 'none' }) as Record<string, unknown>;
  switch (auth.method) {
    case 'client_secret_basic':
    case 'client_secret_post':
      return { method: auth.method, secret: checkedReference(auth.secret, 'client secret') };
    case 'private_key_jwt':
      return { method: 'private_key_jwt', key: checkedReference(auth.key, 'private key (a private JWK or a PKCS#8 PEM)') };
    case 'none':
      return { method: 'none' };
    default:
      throw invalid('the client authentication method must be client_secret_basic, client_secret_post, private_key_jwt or none');
  }
}

function parseSamlPart(input: Partial<Record<keyof SamlSettings, unknown>>): Omit<SamlSettings, keyof CommonSettings> {
  const metadataUrl = input.metadataUrl === undefined || input.metadataUrl === null ? null : checkedUrl('metadata_url', input.metadataUrl);
  const metadataFile = typeof input.metadataFile === 'string' && input.metadataFile !== '' ? input.metadataFile : null;
  if ((metadataUrl === null) === (metadataFile === null)) throw invalid('give the IdP metadata as exactly one of a URL or a file');
  const subjectAttribute = input.subjectAttribute ?? null;
  if (subjectAttribute !== null && (typeof subjectAttribute !== 'string' || !CLAIM_NAME.test(subjectAttribute))) throw invalid('subject_attribute must be an attribute name');
  const spSigningKey = input.spSigningKey ?? null;
  const spSigningCertificate = input.spSigningCertificate ?? null;
  if ((spSigningKey === null) !== (spSigningCertificate === null)) throw invalid('give both the SP signing key and its certificate, or neither');
  return {
    protocol: 'saml',
    metadataUrl,
    metadataFile,
    subjectAttribute,
    spSigningKey: spSigningKey === null ? null : checkedReference(spSigningKey, 'SP signing key (a PKCS#8 PEM)'),
    spSigningCertificate: spSigningCertificate === null ? null : checkedReference(spSigningCertificate, 'SP signing certificate (a PEM certificate)'),
    groupsAttribute: groupsSource('groups_attribute', input.groupsAttribute),
  };
}

function checkedGroupsMatch(value: unknown): GroupsMatch {
  if (value !== GROUPS_MATCH.Name && value !== GROUPS_MATCH.ExternalId) throw invalid('groups_match must be name or external_id');
  return value;
}

/** The claim or attribute naming the person's groups; null (or absent): no group sync. */
function groupsSource(name: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || !CLAIM_NAME.test(value)) throw invalid(`${name} must be a claim or attribute name (printable, no spaces, at most 200 characters)`);
  return value;
}

/** Where the provider's upstream carries the person's groups: its groups claim or attribute; null when it syncs none (also for a row stored before the setting existed). */
export function groupsSourceOf(settings: IdentityProviderSettings): string | null {
  return (settings.protocol === UPSTREAM_PROTOCOL.Saml ? settings.groupsAttribute : settings.groupsClaim) ?? null;
}

/** A stored row's settings with the group settings' defaults (rows stored before issue 46's sync have none). */
export function withGroupDefaults(settings: IdentityProviderSettings): IdentityProviderSettings {
  const source = settings.protocol === UPSTREAM_PROTOCOL.Saml ? { groupsAttribute: null } : { groupsClaim: null };
  const stored: Partial<IdentityProviderSettings> = settings;
  return { ...source, groupsMatch: GROUPS_MATCH.Name, groupsCreate: false, ...stored } as IdentityProviderSettings;
}
