import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
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
