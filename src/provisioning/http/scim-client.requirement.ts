import { Injectable } from '@nestjs/common';
import { AccessDenied } from '../../access/access-denied.js';
import type { AccessRequirement } from '../../access/access-requirement.js';
import type { Principal } from '../../access/token-principal.js';
import { SCIM_SCOPE } from '../scim.constants.js';

/**
 * Who may provision: a client's own access token (client_credentials, RFC 6749 §4.4) holding the
 * `scim` scope, which only a client an administrator registered with it can obtain (a client
 * scope: no person grants it at /authorize). A person's token never provisions, whatever its scope.
 */
@Injectable()
export class ScimClientRequirement implements AccessRequirement {
  check(principal: Principal): void {
    if (principal.kind !== 'access_token') throw new AccessDenied({ error: 'invalid_token', description: 'SCIM takes an access token, not a registration access token' }, principal.scheme);
    if (principal.userId !== null) {
      throw new AccessDenied({ error: 'insufficient_scope', description: `SCIM takes a client's own token (client_credentials) with the scope ${SCIM_SCOPE}; this one speaks for a person`, scope: SCIM_SCOPE }, principal.scheme);
    }
    if (!principal.scopes.has(SCIM_SCOPE)) throw new AccessDenied({ error: 'insufficient_scope', description: `This request needs the scope ${SCIM_SCOPE}`, scope: SCIM_SCOPE }, principal.scheme);
  }
}
