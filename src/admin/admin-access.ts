import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AccessDenied } from '../access/access-denied.js';
import type { AccessRequirement } from '../access/access-requirement.js';
import { RequireAccess } from '../access/require-access.decorator.js';
import type { Principal } from '../access/token-principal.js';
import { ClientsService } from '../clients/clients.service.js';
import { splitScope } from '../common/scope.js';
import { UsersService } from '../users/users.service.js';
import { AdminRolesService } from './admin-roles.service.js';
import { isAdminScope, permittingScopes, type AdminAction, type AdminArea, type AdminPermission, type AdminScope } from '../scopes/admin-scopes.js';

/**
 * Who is calling the admin API, as AdminAccess established it; what controllers pass to the
 * services as the audit actor (an AuditOrigin: who, and from where).
 */
export interface AdminCaller {
  /** `user:<id>` (an administrator's own sign-in) or `client:<id>` (a service client's token). */
  actor: string;
  /** The admin scopes the call may use: the token's, still allowed by the person's roles or the client's registration. */
  scopes: ReadonlySet<AdminScope>;
  /** Where the call came from (request.ip: the client's own address once TRUST_PROXY names the proxies), audited with every change. */
  ip: string;
}

export type AdminRequest = FastifyRequest & { admin: AdminCaller };

/** The admin caller of a request that passed AdminAccess. */
export function adminCaller(request: FastifyRequest): AdminCaller {
  const caller = (request as Partial<AdminRequest>).admin;
  if (caller === undefined) throw new Error('adminCaller() on a route without @AdminRoute');
  return caller;
}

/** An admin API route needing `action` on `area` (admin-scopes.ts says which scopes permit it). */
export function AdminRoute(area: AdminArea, action: AdminAction): ClassDecorator & MethodDecorator {
  return RequireAccess(AdminAccess, { area, action } satisfies AdminPermission);
}

/**
 * Who may call an admin API route, decided here and nowhere else (issue 48). The token must carry
 * a scope that permits the route, and that scope must still be the caller's at this request:
 * - a person's token: their roles (admin_roles) allow it and they are active, read now, so an
 *   administrator whose role is removed loses access on the next request, on every instance;
 * - a client's own token (client_credentials): its registration still holds the scope.
 * A registration access token (RFC 7592) never opens the admin API.
 */
@Injectable()
export class AdminAccess implements AccessRequirement {
  constructor(
    private readonly roles: AdminRolesService,
    private readonly users: UsersService,
    private readonly clients: ClientsService,
  ) {}

  async check(principal: Principal, request: FastifyRequest, argument?: unknown): Promise<void> {
    const permission = argument as AdminPermission;
    if (principal.kind !== 'access_token') {
      throw new AccessDenied({ error: 'invalid_token', description: 'The admin API takes an access token, not a registration access token' }, principal.scheme);
    }
    const permitting = permittingScopes(permission);
    const needed = { error: 'insufficient_scope' as const, scope: permitting.join(' ') };
    const held = permitting.filter((scope) => principal.scopes.has(scope));
    if (held.length === 0) {
      throw new AccessDenied({ ...needed, description: `This request needs one of the scopes ${permitting.join(', ')}` }, principal.scheme);
    }
    const current = principal.userId === null ? await this.clientScopes(principal.clientId) : await this.personScopes(principal.userId);
    const scopes = new Set([...principal.scopes].filter((scope): scope is AdminScope => isAdminScope(scope) && current.has(scope)));
    if (!held.some((scope) => scopes.has(scope))) {
      const whose = principal.userId === null ? 'this client is no longer registered for' : 'the person this token speaks for no longer holds an administrator role allowing';
      throw new AccessDenied({ ...needed, description: `The token carries ${held.join(', ')}, but ${whose} it` }, principal.scheme);
    }
    (request as AdminRequest).admin = { actor: principal.userId === null ? `client:${principal.clientId}` : `user:${principal.userId}`, scopes, ip: request.ip };
  }

  private async personScopes(userId: string): Promise<Set<AdminScope>> {
    const user = await this.users.findById(userId);
    return user?.active ? this.roles.scopesOf(userId) : new Set();
  }

  private async clientScopes(clientId: string): Promise<Set<AdminScope>> {
    const client = await this.clients.findById(clientId);
    return new Set(client === null ? [] : splitScope(client.scope).filter(isAdminScope));
  }
}
