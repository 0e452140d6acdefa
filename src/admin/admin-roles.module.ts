import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../audit/audit.module.js';
import { CommonModule } from '../common/common.module.js';
import { AdminRoleGrant } from './admin-role.entity.js';
import { AdminRoleStore } from './admin-role.store.js';
import { AdminRolesService } from './admin-roles.service.js';

/**
 * Who is an administrator (issue 48). Depends on nothing that issues tokens, so the authorization
 * endpoint (which issues a person only the admin scopes their roles allow) and the admin API both import it.
 */
@Module({
  imports: [TypeOrmModule.forFeature([AdminRoleGrant]), CommonModule, AuditModule],
  providers: [AdminRoleStore, AdminRolesService],
  exports: [AdminRolesService],
})
export class AdminRolesModule {}
