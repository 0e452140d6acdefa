import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module.js';
import { ClientsModule } from '../clients/clients.module.js';
import { UsersModule } from '../users/users.module.js';
import { AdminAccess } from './admin-access.js';
import { AdminRolesController } from './admin-roles.controller.js';
import { AdminRolesModule } from './admin-roles.module.js';

/**
 * The admin API (issue 48) at /admin/api/v1: what the CLI does, over HTTP, for administrators'
 * own sign-ins and service clients holding admin scopes. Its controllers call the same services
 * as the CLI, so a rule and its audit event live in one place; AdminAccess decides who may call.
 */
@Module({
  imports: [AccessModule, AdminRolesModule, ClientsModule, UsersModule],
  controllers: [AdminRolesController],
  providers: [AdminAccess],
})
export class AdminApiModule {}
