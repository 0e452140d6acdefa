import { GRANT_CHOICES } from './client-form.js';
import type { FieldProblem, FieldRule } from './form-problems.js';

/**
 * Editing a client's registration (issue 48): the metadata the registration form sets, sent as a
 * JSON merge patch (RFC 7396) of what changed (PATCH /admin/api/v1/clients/{id}). Whether it has a
 * secret is fixed at registration (RFC 7592 §2.2 as ClientsService reads it), so its type is shown,
 * not edited; metadata the form does not show stays as registered.
 */

/** Where the API's registration messages go (ClientsService and client-metadata.ts word them); the first match wins. */
export const CLIENT_FIELD_RULES: readonly FieldRule[] = [
  { field: 'redirect_uris', matches: 'invalid_redirect_uri' },
  { field: 'redirect_uris', matches: /redirect.?ur/i },
  { field: 'client_name', matches: /client.?name/i },
  { field: 'scope', matches: /scope|granted only by an owner/i },
  { field: 'grant_types', matches: /grant|response_types/i },
];

export interface ClientEditForm {
  client_name: string;
  grant_types: string[];
  redirect_uris: string;
  scope: string;
}

const text = (value: unknown, max: number): string => (typeof value === 'string' ? value.slice(0, max) : '');
const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []);
const lines = (value: string): string[] => value.split(/\r?\n/).map((line) => line.trim()).filter(Boolean);
const words = (value: string): string => value.trim().split(/\s+/).filter(Boolean).join(' ');
const sameSet = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((item) => b.includes(item));

/** The form filled from the registration as the API shows it (GET /clients/{id}). */
export function clientEditFormOf(client: Record<string, unknown>): ClientEditForm {
  return { client_name: text(client.client_name, 200), grant_types: strings(client.grant_types), redirect_uris: strings(client.redirect_uris).join('\n'), scope: text(client.scope, 2000) };
}

export function clientEditForm(body: Record<string, unknown> | undefined): ClientEditForm {
  return {
    client_name: text(body?.client_name, 200),
    grant_types: [body?.grant_types].flat().filter((value): value is string => typeof value === 'string').slice(0, 20),
    redirect_uris: text(body?.redirect_uris, 20_000),
    scope: text(body?.scope, 2000),
  };
}

/** The registration form's grant types, and any other the client holds (device code, token exchange…): a box for each, so saving never drops one unseen. */
export function grantChoicesFor(client: Record<string, unknown>): { value: string; label: string }[] {
  const offered: { value: string; label: string }[] = GRANT_CHOICES.map((choice) => ({ value: choice.value, label: choice.label }));
  const others = strings(client.grant_types).filter((grant) => !offered.some((choice) => choice.value === grant));
  return [...offered, ...others.map((grant) => ({ value: grant, label: grant }))];
}

/** The merge patch of what the form changed (empty: nothing), or what the form itself can say is wrong. */
export function clientPatchOf(current: ClientEditForm, form: ClientEditForm): { patch: Record<string, unknown> } | { problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  if (form.client_name.trim() === '') problems.push({ field: 'client_name', message: 'Give the client a name.' });
  if (form.grant_types.length === 0) problems.push({ field: 'grant_types', message: 'Choose at least one grant type.' });
  if (problems.length > 0) return { problems };
  const patch: Record<string, unknown> = {};
  if (form.client_name.trim() !== current.client_name) patch.client_name = form.client_name.trim();
  if (!sameSet(form.grant_types, current.grant_types)) patch.grant_types = form.grant_types;
  const redirectUris = lines(form.redirect_uris);
  if (redirectUris.join('\n') !== lines(current.redirect_uris).join('\n')) patch.redirect_uris = redirectUris;
  const scope = words(form.scope);
  // The same scopes in another order are no change; an emptied scope is removed from the registration (null, RFC 7396 §2).
  if (!sameSet(scope.split(' ').filter(Boolean), words(current.scope).split(' ').filter(Boolean))) patch.scope = scope === '' ? null : scope;
  return { patch };
}
