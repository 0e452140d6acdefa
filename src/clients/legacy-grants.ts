import { LEGACY_GRANT_TYPES, type GrantType } from '../common/oauth.constants.js';
import type { Client } from './client.entity.js';

/** The implicit and password grants an administrator allowed the client (RFC 9700 §2.1.2, §2.4 advise against both). */
export function legacyGrantsOf(client: Pick<Client, 'grantTypes'>): GrantType[] {
  return LEGACY_GRANT_TYPES.filter((grant) => client.grantTypes.includes(grant));
}

/** What start-up logs and doctor reports about such a client: its id, name and grants, never anything secret. */
export function legacyGrantsWarning(client: Pick<Client, 'id' | 'name' | 'grantTypes'>): string | undefined {
  const legacy = legacyGrantsOf(client);
  if (legacy.length === 0) return undefined;
  return `Client ${client.id} ("${client.name}") is allowed the ${legacy.join(' and ')} grant${legacy.length > 1 ? 's' : ''}, which RFC 9700 advises against`;
}
