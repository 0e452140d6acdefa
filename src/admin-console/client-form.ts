import { ClientAuthMethod, GrantType } from '../common/oauth.constants.js';
import { formText, formValues, type FieldProblem, type FieldRule } from './console-forms.js';

/** The grant types the registration form offers (the API takes every one it supports; the CLI and the API register the rest). */
export const GRANT_CHOICES = [
  { value: GrantType.AuthorizationCode, label: 'Authorization code: people sign in through it' },
  { value: GrantType.RefreshToken, label: 'Refresh token' },
  { value: GrantType.ClientCredentials, label: 'Client credentials: a service acting for itself' },
] as const;

/**
 * Where the API's registration messages go, on the registration form and the edit form alike
 * (ClientsService and client-metadata.ts word them); the first match wins.
 */
export const CLIENT_FIELD_RULES: readonly FieldRule[] = [
  { field: 'redirect_uris', matches: 'invalid_redirect_uri' },
  { field: 'redirect_uris', matches: /redirect.?ur/i },
  { field: 'client_name', matches: /client.?name/i },
  { field: 'scope', matches: /scope|granted only by an owner/i },
  { field: 'grant_types', matches: /grant|response_types/i },
];

/** What a client form alone can say is missing (a name, a grant type), each beside its field; every other rule is the API's. */
export function missingClientMetadata(form: { client_name: string; grant_types: readonly string[] }): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (form.client_name.trim() === '') problems.push({ field: 'client_name', message: 'Give the client a name.' });
  if (form.grant_types.length === 0) problems.push({ field: 'grant_types', message: 'Choose at least one grant type.' });
  return problems;
}

/** The redirect URIs typed one a line, blank lines left out. */
export function redirectUrisOf(typed: string): string[] {
  return typed
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
}

/** The registration form as typed, kept to show again beside a refusal. */
export interface NewClientForm {
  client_name: string;
  client_type: 'confidential' | 'public';
  grant_types: string[];
  redirect_uris: string;
  scope: string;
}

/** The form's fields from a posted body (or empty, for a new form); a checkbox group arrives as one value or several. */
export function newClientForm(body: Record<string, unknown> | undefined): NewClientForm {
  return {
    client_name: formText(body?.client_name, 200),
    client_type: body?.client_type === 'public' ? 'public' : 'confidential',
    grant_types: body === undefined ? [GrantType.AuthorizationCode] : formValues(body.grant_types, 10),
    redirect_uris: formText(body?.redirect_uris, 20_000),
    scope: formText(body?.scope, 2000),
  };
}

/**
 * The RFC 7591 metadata the admin API registers (POST /admin/api/v1/clients), or what the console
 * itself can say is missing before asking; every other rule is the API's (the same as the CLI's and
 * /register's), and its message is what the administrator sees, beside the field it is about.
 */
export function registrationOf(form: NewClientForm): { body: Record<string, unknown> } | { problems: FieldProblem[] } {
  const problems = missingClientMetadata(form);
  if (problems.length > 0) return { problems };
  return {
    body: {
      client_name: form.client_name.trim(),
      grant_types: form.grant_types,
      redirect_uris: redirectUrisOf(form.redirect_uris),
      ...(form.scope.trim() === '' ? {} : { scope: form.scope.trim().split(/\s+/).join(' ') }),
      token_endpoint_auth_method: form.client_type === 'public' ? ClientAuthMethod.None : ClientAuthMethod.ClientSecretBasic,
    },
  };
}
