import type { FieldProblem, FieldRule } from './console-forms.js';
import { CLIENT_AUTH_METHODS, DEFAULT_SCOPE, type FromFiles, type IdentityProviderForm, type IdentityProviderView } from './identity-provider-form.js';

/**
 * Where the admin API's refusals are shown: the settings' checks (identity-provider-settings.ts,
 * identity-provider-body.ts) name the setting they refuse. First match wins: the SP key's messages
 * mention an environment variable too, so they come before the client secret's.
 */
export const PROVIDER_FIELDS: readonly FieldRule[] = [
  { field: 'id', matches: /^The id\b|exists already/ },
  { field: 'name', matches: /^The name\b|^name\b/ },
  { field: 'domains', matches: /domain/i },
  { field: 'issuer', matches: /^issuer\b/ },
  { field: 'client_id', matches: /^client_id\b/ },
  { field: 'client_auth_method', matches: /client authentication method/ },
  { field: 'sp_signing_key_env', matches: /sp_signing|SP signing/ },
  { field: 'secret_env', matches: /client_auth|client secret|private key|environment variable/ },
  { field: 'scope', matches: /^scope\b/ },
  { field: 'groups_source', matches: /groups_claim|groups_attribute/ },
  { field: 'groups_match', matches: /groups_match|groups_create/ },
  { field: 'metadata_url', matches: /metadata/i },
  { field: 'subject_attribute', matches: /subject_attribute/ },
];

/**
 * The admin API's body for the form (POST /identity-providers, or PATCH of `current`), or what the
 * console can tell is missing before asking. Every other rule is the API's, as for the CLI.
 * A PATCH names every setting the form holds (an unticked box is false, an emptied groups claim
 * none), except a reference read from a file now, which stays while its field is left empty.
 */
export function providerRequest(form: IdentityProviderForm, current: IdentityProviderView | undefined, files: FromFiles): { body: Record<string, unknown> } | { problems: FieldProblem[] } {
  const problems = missing(form, current, files);
  if (problems.length > 0) return { problems };
  const settings: Record<string, unknown> = {
    domains: form.domains.split(/[\s,;]+/).filter(Boolean).map((domain) => domain.toLowerCase()),
    create_accounts: form.create_accounts,
    trust_email: form.trust_email,
    trust_authentication_level: form.trust_authentication_level,
    pass_login_hint: form.pass_login_hint,
    sign_out_upstream: form.sign_out_upstream,
    groups_match: form.groups_match,
    groups_create: form.groups_create,
    ...(form.protocol === 'oidc' ? oidcSettings(form, current, files) : samlSettings(form, current, files)),
  };
  const name = form.name === '' && current === undefined ? {} : { name: form.name };
  const body = current === undefined ? { id: form.id, protocol: form.protocol, ...name, enabled: form.enabled, settings } : { ...name, enabled: form.enabled, settings };
  return { body };
}

function oidcSettings(form: IdentityProviderForm, current: IdentityProviderView | undefined, files: FromFiles): Record<string, unknown> {
  const choice = CLIENT_AUTH_METHODS.find((method) => method.value === form.client_auth_method)!;
  // A secret read from a file stays while the method stays and no variable is named instead.
  const keepFile = files.secret && form.secret_env === '' && current?.settings.client_auth?.method === choice.value;
  const clientAuth = choice.needs === null ? { method: choice.value } : { method: choice.value, [choice.needs]: { env: form.secret_env } };
  return {
    issuer: form.issuer,
    client_id: form.client_id,
    ...(keepFile ? {} : { client_auth: clientAuth }),
    scope: form.scope === '' ? DEFAULT_SCOPE : form.scope.split(/\s+/).join(' '),
    userinfo: form.userinfo,
    groups_claim: form.groups_source === '' ? null : form.groups_source,
  };
}

function samlSettings(form: IdentityProviderForm, current: IdentityProviderView | undefined, files: FromFiles): Record<string, unknown> {
  // A URL given replaces metadata read from a file (exactly one of them is allowed).
  const metadata = form.metadata_url === '' ? {} : { metadata_url: form.metadata_url, ...(current === undefined ? {} : { metadata_file: null }) };
  const noKeys = form.sp_signing_key_env === '' && form.sp_signing_certificate_env === '';
  const reference = (env: string) => (env === '' ? null : { env });
  const keys = noKeys && (current === undefined || files.spKeys) ? {} : { sp_signing_key: reference(form.sp_signing_key_env), sp_signing_certificate: reference(form.sp_signing_certificate_env) };
  return { ...metadata, subject_attribute: form.subject_attribute === '' ? null : form.subject_attribute, groups_attribute: form.groups_source === '' ? null : form.groups_source, ...keys };
}

/** What is plainly missing, each beside its field. */
function missing(form: IdentityProviderForm, current: IdentityProviderView | undefined, files: FromFiles): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (current === undefined && form.id === '') problems.push({ field: 'id', message: 'Give the provider an id, such as contoso.' });
  if (form.protocol === 'oidc') {
    if (form.issuer === '') problems.push({ field: 'issuer', message: "Give the provider's issuer URL." });
    if (form.client_id === '') problems.push({ field: 'client_id', message: 'Give the client id the provider gave Latchkey.' });
    const needs = CLIENT_AUTH_METHODS.find((method) => method.value === form.client_auth_method)?.needs;
    const kept = files.secret && current?.settings.client_auth?.method === form.client_auth_method;
    if (needs && form.secret_env === '' && !kept) {
      problems.push({ field: 'secret_env', message: `Name the environment variable that holds the ${needs === 'key' ? 'private key' : 'client secret'}, such as LATCHKEY_IDP_CONTOSO_SECRET.` });
    }
  } else if (form.metadata_url === '' && !(current !== undefined && files.metadata)) {
    problems.push({ field: 'metadata_url', message: "Give the URL of the provider's SAML metadata." });
  }
  return problems;
}
