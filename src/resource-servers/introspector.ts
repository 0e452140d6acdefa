import type { Client } from '../clients/client.entity.js';
import { splitScope } from '../common/scope.js';

/** The client scope that lets a resource server introspect tokens. */
export const INTROSPECTION_SCOPE = 'tokens:introspect';

/** Why `client` may not introspect at all (RFC 7662 §2.1, §4: never open to anyone), or undefined when it may. */
export function introspectionRefusal(client: Client): string | undefined {
  return client.isPublic || !splitScope(client.scope).includes(INTROSPECTION_SCOPE)
    ? `Introspection needs a confidential client registered with the ${INTROSPECTION_SCOPE} scope`
    : undefined;
}
