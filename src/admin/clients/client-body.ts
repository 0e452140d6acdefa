import { DomainError } from '../../common/domain-error.js';
import type { Client } from '../../clients/client.entity.js';
import { clientView, type NewClient } from '../../clients/client-information.js';
import { CLIENT_METADATA_FIELDS, parseClientMetadata } from '../../clients/client-metadata.js';
import { OPENID_METADATA_SCHEMA } from '../../clients/openid-client-settings.js';

/** What the server issues and an administrator never chooses over the admin API (clients:apply may: its documents name them). */
const ISSUED = ['client_id', 'client_secret'];
const EDITABLE = CLIENT_METADATA_FIELDS.filter((field) => !ISSUED.includes(field));

/**
 * A new client from POST /clients: RFC 7591 §2 metadata, checked by the parser /register uses and
 * then by every registration's rules (ClientsService). Unlike /register, a field this server does
 * not know is refused rather than ignored: an administrator's misspelt field is a mistake.
 */
export function newClientFrom(body: Record<string, unknown>): NewClient {
  assertEditableFields(body);
  return parseClientMetadata(body).client;
}

/**
 * PATCH /clients/{id} (a JSON merge patch, RFC 7396, over the registration metadata): each member
 * given replaces the registered value, `null` removes it, the rest stay as registered. The result
 * is a whole registration, checked as RFC 7592's PUT checks one. Values the client never
 * registered (response types that follow its grant types, OpenID defaults) stay unregistered, so
 * that they keep following what they follow.
 */
export function patchedClient(client: Client, patch: Record<string, unknown>): NewClient {
  assertEditableFields(patch);
  const registered: Record<string, unknown> = Object.fromEntries(Object.entries(clientView(client)).filter(([field]) => EDITABLE.includes(field)));
  if (client.responseTypes === null) delete registered.response_types;
  if (client.openIdSettings === null) for (const field of Object.keys(OPENID_METADATA_SCHEMA)) if (field !== 'minimum_acr') delete registered[field];
  const merged = Object.fromEntries(Object.entries({ ...registered, ...patch }).filter(([, value]) => value !== null));
  return parseClientMetadata(merged).client;
}

function assertEditableFields(body: Record<string, unknown>): void {
  const issued = ISSUED.filter((field) => Object.hasOwn(body, field));
  if (issued.length > 0) throw new DomainError('invalid_client_metadata', `${issued.join(' and ')} are issued by the server; a new secret comes from POST /clients/{id}/secret`);
  const unknown = Object.keys(body).filter((field) => !EDITABLE.includes(field));
  if (unknown.length > 0) throw new DomainError('invalid_client_metadata', `Unknown client metadata: ${unknown.slice(0, 5).map((field) => JSON.stringify(field.slice(0, 64))).join(', ')}; the fields are ${EDITABLE.join(', ')}`);
}

