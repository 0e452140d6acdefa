import type { FastifyRequest } from 'fastify';
import type { Principal } from './token-principal.js';

/**
 * A route's own rule for who may call it, beyond holding a scope (RFC 7592's client management:
 * that client's registration access token, or an administrator's token for another client).
 * Throws AccessDenied (or an ApiError such as 404) to refuse; may attach what it resolved to the request.
 */
export interface AccessRequirement {
  /** `argument`: what the route declared beside the requirement (@RequireAccess(Requirement, argument)), e.g. the admin permission it needs. */
  check(principal: Principal, request: FastifyRequest, argument?: unknown): Promise<void> | void;
}

/** The scope a route needs when it depends on the request (the data API: `<collection>:read` or `:write`). */
export interface ScopeResolver {
  /** Throws (an ApiError 404, say) when the request names nothing to need a scope for. */
  scopeFor(request: FastifyRequest): string;
}
