import type { FastifyRequest } from 'fastify';
import { adminCaller } from '../admin-access.js';

/**
 * Who administers a person (issue 48), as the people services need to know them: the audit actor
 * and the address the request came from (who and from where), and whether they hold admin:owner,
 * which AdministratorProtection asks before anything is done to an administrator.
 */
export interface PeopleAdministrator {
  /** The audit actor: `cli`, `user:<id>` or `client:<id>`. */
  readonly actor: string;
  /** The caller's address, over HTTP; the CLI has none. */
  readonly ip?: string;
  readonly owner: boolean;
}

/** The server's operator, at the CLI: an owner (whoever runs it could grant themselves the role anyway). */
export const CLI_OPERATOR: PeopleAdministrator = { actor: 'cli', owner: true };

/** The administrator an admin API request speaks for (AdminAccess established who; request.ip is the client's once Fastify trusts the proxy). */
export function requestAdministrator(request: FastifyRequest): PeopleAdministrator {
  const caller = adminCaller(request);
  return { actor: caller.actor, ip: request.ip, owner: caller.scopes.has('admin:owner') };
}
