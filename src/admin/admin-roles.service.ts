import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { actorName, type AuditActor } from '../audit/audit-actor.js';
import { AuditService } from '../audit/audit.service.js';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/domain-error.js';
import { Transactions } from '../database/transactions.js';
import { isUniqueViolation } from '../database/unique-violation.js';
import { AdminRoleGrant } from './admin-role.entity.js';
import { AdminRoleStore } from './admin-role.store.js';
import { ADMIN_ROLES, isAdminRole, isAdminScope, scopesOfRoles, type AdminRole, type AdminScope } from '../scopes/admin-scopes.js';

/**
 * Who is an administrator (issue 48): the roles people hold, granted and removed by the CLI
 * (`users:roles`) or by an owner through the admin API, each change audited. Read by AdminAccess on
 * every admin request and by the authorization endpoint, which issues a person only the admin
 * scopes their roles allow.
 */
@Injectable()
export class AdminRolesService {
  constructor(
    private readonly store: AdminRoleStore,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
    private readonly clock: Clock,
  ) {}

  /** The person's roles, in the caller's transaction when given. */
  rolesOf(userId: string, manager?: EntityManager): Promise<AdminRole[]> {
    return this.store.rolesOf(userId, manager);
  }

  rolesOfMany(userIds: readonly string[]): Promise<Map<string, AdminRole[]>> {
    return this.store.rolesOfMany(userIds);
  }

  /** How many active owners there are besides `userId`, in the caller's transaction, read so that two such checks take turns (AdminRoleStore). */
  activeOwnersBesides(userId: string, manager: EntityManager): Promise<number> {
    return this.store.activeOwnersBesides(userId, manager);
  }

  /** The admin scopes the person's roles allow now. */
  async scopesOf(userId: string): Promise<Set<AdminScope>> {
    return scopesOfRoles(await this.store.rolesOf(userId));
  }

  /**
   * The scope with only the admin scopes the person's roles allow now: what the authorization
   * endpoint issues and a refresh carries (a requested scope lies inside every source that bounds
   * it, the person included). No query unless the scope holds an admin scope.
   */
  async withinRoles(userId: string, scope: readonly string[]): Promise<readonly string[]> {
    if (!scope.some(isAdminScope)) return scope;
    const allowed = await this.scopesOf(userId);
    return scope.filter((s) => !isAdminScope(s) || allowed.has(s as AdminScope));
  }

  /** Every grant, for listing administrators. */
  list(): Promise<AdminRoleGrant[]> {
    return this.store.list();
  }

  /** A role from outside (a flag, a JSON body), or invalid_admin_role naming the ones there are. */
  parseRole(value: unknown): AdminRole {
    if (typeof value === 'string' && isAdminRole(value)) return value;
    throw new DomainError('invalid_admin_role', `Unknown administrator role ${JSON.stringify(value)}; the roles are ${Object.keys(ADMIN_ROLES).join(', ')}`);
  }

  /** Grants the role (audited as admin_role.granted); false when the person already held it. */
  async grant(userId: string, role: AdminRole, actor: AuditActor): Promise<boolean> {
    try {
      return await this.transactions.run(async (manager) => {
        // Read first: a refusal thrown inside the unit would roll back its neighbours' work too (Transactions).
        if ((await this.store.rolesOf(userId, manager)).includes(role)) return false;
        const grant = Object.assign(new AdminRoleGrant(), { userId, role, grantedAt: this.clock.now(), grantedBy: actorName(actor) });
        await this.store.insert(grant, manager);
        await this.audit.record({ actor, action: 'admin_role.granted', subject: `user:${userId}`, details: { role } }, manager);
        return true;
      });
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  /**
   * Removes the role (audited as admin_role.revoked); false when the person did not hold it. The
   * last owner is kept (409 last_owner) unless `allowNoOwner` (the CLI, whose operator can always
   * grant the role again from the machine): over HTTP nobody can lock every administrator out.
   */
  async revoke(userId: string, role: AdminRole, actor: AuditActor, { allowNoOwner = false } = {}): Promise<boolean> {
    return this.transactions.run(async (manager) => {
      const removed = await this.store.delete(userId, role, manager);
      if (!removed) return false;
      if (role === 'owner' && !allowNoOwner && (await this.store.count('owner', manager)) === 0) {
        throw new DomainError('last_owner', 'This is the last owner; make someone else an owner first (or use the CLI on the server: users:roles)');
      }
      await this.audit.record({ actor, action: 'admin_role.revoked', subject: `user:${userId}`, details: { role } }, manager);
      return true;
    });
  }
}
