import { GRANT_CHOICES, missingClientMetadata, redirectUrisOf } from './client-form.js';
import { formText, formValues, type FieldProblem } from './console-forms.js';

/**
 * Editing a client's registration (issue 48): the metadata the registration form sets, sent as a
 * JSON merge patch (RFC 7396) of what changed (PATCH /admin/api/v1/clients/{id}). Whether it has a
 * secret is fixed at registration (RFC 7592 §2.2 as ClientsService reads it), so its type is shown,
 * not edited; metadata the form does not show stays as registered.
 */

export interface ClientEditForm {
  client_name: string;
  grant_types: string[];
  redirect_uris: string;
  scope: string;
}

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []);
const words = (value: string): string => value.trim().split(/\s+/).filter(Boolean).join(' ');
const sameSet = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((item) => b.includes(item));

/** The form filled from the registration as the API shows it (GET /clients/{id}). */
export function clientEditFormOf(client: Record<string, unknown>): ClientEditForm {
  return { client_name: formText(client.client_name, 200), grant_types: strings(client.grant_types), redirect_uris: strings(client.redirect_uris).join('\n'), scope: formText(client.scope, 2000) };
}

export function clientEditForm(body: Record<string, unknown> | undefined): ClientEditForm {
  return {
    client_name: formText(body?.client_name, 200),
    grant_types: formValues(body?.grant_types, 20),
    redirect_uris: formText(body?.redirect_uris, 20_000),
    scope: formText(body?.scope, 2000),
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
  const problems = missingClientMetadata(form);
  if (problems.length > 0) return { problems };
  const patch: Record<string, unknown> = {};
  if (form.client_name.trim() !== current.client_name) patch.client_name = form.client_name.trim();
  if (!sameSet(form.grant_types, current.grant_types)) patch.grant_types = form.grant_types;
  const redirectUris = redirectUrisOf(form.redirect_uris);
  if (redirectUris.join('\n') !== redirectUrisOf(current.redirect_uris).join('\n')) patch.redirect_uris = redirectUris;
  const scope = words(form.scope);
  // The same scopes in another order are no change; an emptied scope is removed from the registration (null, RFC 7396 §2).
  if (!sameSet(scope.split(' ').filter(Boolean), words(current.scope).split(' ').filter(Boolean))) patch.scope = scope === '' ? null : scope;
  return { patch };
}
