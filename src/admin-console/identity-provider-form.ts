import { formFlag, formText } from './console-forms.js';

export type UpstreamProtocol = 'oidc' | 'saml';

/** How Latchkey authenticates to an OpenID Connect provider's token endpoint, as the form offers it. */
export const CLIENT_AUTH_METHODS = [
  { value: 'client_secret_basic', label: 'A client secret, sent in the Authorization header (client_secret_basic)', needs: 'secret' },
  { value: 'client_secret_post', label: 'A client secret, sent in the request body (client_secret_post)', needs: 'secret' },
  { value: 'private_key_jwt', label: 'A private key that signs a short JWT (private_key_jwt)', needs: 'key' },
  { value: 'none', label: 'Nothing: the provider registered Latchkey as a public client (none)', needs: null },
] as const;

/** A secret, a key or a document by reference, as the admin API shows it (never its value). */
type Reference = { env: string } | { file: string } | null | undefined;

/** An identity provider as GET /identity-providers/{id} answers it (identityProviderWire). */
export interface IdentityProviderView {
  id: string;
  name: string;
  protocol: UpstreamProtocol;
  enabled: boolean;
  settings: Record<string, unknown> & {
    domains?: string[];
    client_auth?: { method: string; secret?: Reference; key?: Reference };
    sp_signing_key?: Reference;
    sp_signing_certificate?: Reference;
    mapping?: Record<string, string>;
  };
  [callback: string]: unknown;
}

/** The form as typed (or as the provider is now, on the edit page). */
export interface IdentityProviderForm {
  protocol: UpstreamProtocol;
  id: string;
  name: string;
  enabled: boolean;
  domains: string;
  issuer: string;
  client_id: string;
  client_auth_method: string;
  secret_env: string;
  scope: string;
  userinfo: boolean;
  metadata_url: string;
  subject_attribute: string;
  sp_signing_key_env: string;
  sp_signing_certificate_env: string;
  create_accounts: boolean;
  trust_email: boolean;
  trust_authentication_level: boolean;
  pass_login_hint: boolean;
  sign_out_upstream: boolean;
  groups_source: string;
  groups_match: 'name' | 'external_id';
  groups_create: boolean;
}

/** What the provider reads from a file on the server (named with the CLI, which the API cannot): kept while its field is left empty. */
export interface FromFiles {
  secret: boolean;
  metadata: boolean;
  spKeys: boolean;
}

export const NONE_FROM_FILES: FromFiles = { secret: false, metadata: false, spKeys: false };

export const DEFAULT_SCOPE = 'openid email profile';

/** A new provider's form, with the defaults the service would fill (identity-provider-settings.ts). */
export function newProviderForm(protocol: UpstreamProtocol): IdentityProviderForm {
  return {
    protocol,
    id: '',
    name: '',
    enabled: true,
    domains: '',
    issuer: '',
    client_id: '',
    client_auth_method: 'client_secret_basic',
    secret_env: '',
    scope: DEFAULT_SCOPE,
    userinfo: true,
    metadata_url: '',
    subject_attribute: '',
    sp_signing_key_env: '',
    sp_signing_certificate_env: '',
    create_accounts: true,
    trust_email: false,
    trust_authentication_level: false,
    pass_login_hint: true,
    sign_out_upstream: true,
    groups_source: '',
    groups_match: 'name',
    groups_create: false,
  };
}

/** The posted form; `protocol` is the one being created, or the provider's own (a protocol never changes). */
export function providerFormFrom(body: Record<string, unknown> | undefined, protocol: UpstreamProtocol): IdentityProviderForm {
  const text = (name: keyof IdentityProviderForm, max = 2000) => formText(body?.[name], max).trim();
  const method = text('client_auth_method', 40);
  return {
    protocol,
    id: text('id', 100),
    name: text('name', 200),
    enabled: formFlag(body?.enabled),
    domains: text('domains'),
    issuer: text('issuer'),
    client_id: text('client_id', 300),
    client_auth_method: CLIENT_AUTH_METHODS.some((choice) => choice.value === method) ? method : 'client_secret_basic',
    secret_env: text('secret_env', 200),
    scope: text('scope'),
    userinfo: formFlag(body?.userinfo),
    metadata_url: text('metadata_url'),
    subject_attribute: text('subject_attribute', 300),
    sp_signing_key_env: text('sp_signing_key_env', 200),
    sp_signing_certificate_env: text('sp_signing_certificate_env', 200),
    create_accounts: formFlag(body?.create_accounts),
    trust_email: formFlag(body?.trust_email),
    trust_authentication_level: formFlag(body?.trust_authentication_level),
    pass_login_hint: formFlag(body?.pass_login_hint),
    sign_out_upstream: formFlag(body?.sign_out_upstream),
    groups_source: text('groups_source', 300),
    groups_match: body?.groups_match === 'external_id' ? 'external_id' : 'name',
    groups_create: formFlag(body?.groups_create),
  };
}

/** The edit page's form: the provider as it is now (a reference by its variable's name; a file's is left empty and kept). */
export function providerFormOf(view: IdentityProviderView): IdentityProviderForm {
  const s = view.settings;
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  const flag = (value: unknown, fallback: boolean) => (typeof value === 'boolean' ? value : fallback);
  const auth = s.client_auth;
  return {
    protocol: view.protocol,
    id: view.id,
    name: view.name,
    enabled: view.enabled,
    domains: (s.domains ?? []).join(' '),
    issuer: text(s.issuer),
    client_id: text(s.client_id),
    client_auth_method: auth?.method ?? 'none',
    secret_env: envOf(auth?.secret ?? auth?.key),
    scope: text(s.scope) || DEFAULT_SCOPE,
    userinfo: flag(s.userinfo, true),
    metadata_url: text(s.metadata_url),
    subject_attribute: text(s.subject_attribute),
    sp_signing_key_env: envOf(s.sp_signing_key),
    sp_signing_certificate_env: envOf(s.sp_signing_certificate),
    create_accounts: flag(s.create_accounts, true),
    trust_email: flag(s.trust_email, false),
    trust_authentication_level: flag(s.trust_authentication_level, false),
    pass_login_hint: flag(s.pass_login_hint, true),
    sign_out_upstream: flag(s.sign_out_upstream, true),
    groups_source: text(view.protocol === 'saml' ? s.groups_attribute : s.groups_claim),
    groups_match: s.groups_match === 'external_id' ? 'external_id' : 'name',
    groups_create: flag(s.groups_create, false),
  };
}

/** What of the provider is read from files on the server now. */
export function fromFilesOf(view: IdentityProviderView | undefined): FromFiles {
  if (view === undefined) return NONE_FROM_FILES;
  const s = view.settings;
  return { secret: isFile(s.client_auth?.secret ?? s.client_auth?.key), metadata: typeof s.metadata_file === 'string' && s.metadata_file !== '', spKeys: isFile(s.sp_signing_key) || isFile(s.sp_signing_certificate) };
}

function envOf(reference: Reference): string {
  return reference && 'env' in reference ? reference.env : '';
}

function isFile(reference: Reference): boolean {
  return reference !== null && reference !== undefined && 'file' in reference;
}
