import { ClientAuthMethod, GrantType } from '../common/oauth.constants.js';

/** The grant types the registration form offers (the API takes every one it supports; the CLI and the API register the rest). */
export const GRANT_CHOICES = [
  { value: GrantType.AuthorizationCode, label: 'Authorization code: people sign in through it' },
  { value: GrantType.RefreshToken, label: 'Refresh token' },
  { value: GrantType.ClientCredentials, label: 'Client credentials: a service acting for itself' },
] as const;

/** The registration form as typed, kept to show again beside a refusal. */
export interface NewClientForm {
  client_name: string;
  client_type: 'confidential' | 'public';
  grant_types: string[];
  redirect_uris: string;
  scope: string;
}

const text = (value: unknown, max: number): string => (typeof value === 'string' ? value.slice(0, max) : '');

/** The form's fields from a posted body (or empty, for a new form); a checkbox group arrives as one value or several. */
export function newClientForm(body: Record<string, unknown> | undefined): NewClientForm {
  const grants = body === undefined ? [GrantType.AuthorizationCode] : [body.grant_types].flat().filter((value): value is string => typeof value === 'string');
  return {
    client_name: text(body?.client_name, 200),
    client_type: body?.client_type === 'public' ? 'public' : 'confidential',
    grant_types: grants.slice(0, 10),
    redirect_uris: text(body?.redirect_uris, 20_000),
    scope: text(body?.scope, 2000),
  };
}

/**
 * The RFC 7591 metadata the admin API registers (POST /admin/api/v1/clients), or what the console
 * itself can say is missing before asking; every other rule is the API's (the same as the CLI's and
 * /register's), and its message is what the administrator sees.
 */
export function registrationOf(form: NewClientForm): { body: Record<string, unknown> } | { problem: string } {
  if (form.client_name.trim() === '') return { problem: 'Give the client a name.' };
  if (form.grant_types.length === 0) return { problem: 'Choose at least one grant type.' };
  const redirectUris = form.redirect_uris.split(/\r?\n/).map((line) => line.trim()).filter(Boolean);
  return {
    body: {
      client_name: form.client_name.trim(),
      grant_types: form.grant_types,
      redirect_uris: redirectUris,
      ...(form.scope.trim() === '' ? {} : { scope: form.scope.trim().split(/\s+/).join(' ') }),
      token_endpoint_auth_method: form.client_type === 'public' ? ClientAuthMethod.None : ClientAuthMethod.ClientSecretBasic,
    },
  };
}
