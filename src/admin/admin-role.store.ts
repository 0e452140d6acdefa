import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { In, type DataSource, type EntityManager } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import { AdminRoleGrant } from './admin-role.entity.js';
import type { AdminRole } from '../scopes/admin-scopes.js';

/** The admin_roles table. Writes run in the caller's transaction (AdminRolesService). */
@Injectable()
export class AdminRoleStore {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Read on every admin API request (AdminAccess): one primary-key range read, never cached, so a removed role is gone on the next request on every instance. */
  async rolesOf(userId: string, manager: EntityManager = this.dataSource.manager): Promise<AdminRole[]> {
    const rows = await manager.find(AdminRoleGrant, { where: { userId }, order: { role: 'ASC' } });
    return rows.map((row) => row.role);
  }

  /** The roles of each of these people (the admin API's list of people). */
  async rolesOfMany(userIds: readonly string[]): Promise<Map<string, AdminRole[]>> {
    const rows = userIds.length === 0 ? [] : await this.dataSource.manager.find(AdminRoleGrant, { where: { userId: In([...userIds]) }, order: { role: 'ASC' } });
    const roles = new Map<string, AdminRole[]>();
    for (const row of rows) roles.set(row.userId, [...(roles.get(row.userId) ?? []), row.role]);
    return roles;
  }

  /**
   * How many active owners there are besides `userId`, in the caller's transaction. On PostgreSQL
   * the owners' rows are locked first (FOR UPDATE), so two administrators locking or deleting the
   * last two owners at once take turns, and the second counts after the first commits (a new
   * statement sees it under READ COMMITTED); SQLite's one writer already takes turns.
   */
  async activeOwnersBesides(userId: string, manager: EntityManager): Promise<number> {
    if (this.dataSource.options.type === 'postgres') await manager.query(`SELECT "user_id" FROM "admin_roles" WHERE "role" = 'owner' FOR UPDATE`);
    return manager
      .createQueryBuilder(AdminRoleGrant, 'held')
      .innerJoin('held.user', 'person')
      .where("held.role = 'owner' AND held.userId <> :userId AND person.active IS TRUE", { userId })
      .getCount();
  }

  list(): Promise<AdminRoleGrant[]> {
    return this.dataSource.manager.find(AdminRoleGrant, { order: { userId: 'ASC', role: 'ASC' } });
  }

  /** Throws a unique violation if the person already holds the role (AdminRolesService reads that as "already held"). */
  async insert(grant: AdminRoleGrant, manager: EntityManager): Promise<void> {
    await manager.insert(AdminRoleGrant, grant as QueryDeepPartialEntity<AdminRoleGrant>);
  }

  async delete(userId: string, role: AdminRole, manager: EntityManager): Promise<boolean> {
    const result = await manager.delete(AdminRoleGrant, { userId, role });
    return (result.affected ?? 0) > 0;
  }

  /** How many people hold the role, counted in the caller's transaction. */
  count(role: AdminRole, manager: EntityManager): Promise<number> {
    return manager.countBy(AdminRoleGrant, { role });
  }
}
