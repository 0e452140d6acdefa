import type { FastifyRequest } from 'fastify';
import type { ClientEditor } from '../../clients/client-change-policy.js';
import { adminCaller } from '../admin-access.js';

/**
 * The admin API caller as the clients' rules see them (src/clients/client-change-policy.ts): an
 * administrator, an owner only when the call may use admin:owner (issue 48: a client
 * administrator never touches a client holding an owner-only scope), with their address for the
 * audit trail.
 */
export function adminClientEditor(request: FastifyRequest): ClientEditor {
  const caller = adminCaller(request);
  return { kind: 'administrator', actor: caller.actor, owner: caller.scopes.has('admin:owner'), ip: request.ip };
}
