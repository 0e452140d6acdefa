import type { FastifyRequest } from 'fastify';
import type { TokenPrincipal } from '../../access/token-principal.js';

/** A /scim/v2 request once ScimClientRequirement let it through: a client's own token. */
export type ScimRequest = FastifyRequest & { user: TokenPrincipal };

/** The audit actor of a provisioning change: the connector's client. */
export function actorOf(request: ScimRequest): string {
  return `client:${request.user.clientId}`;
}
