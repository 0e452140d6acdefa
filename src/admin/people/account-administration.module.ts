import { Module } from '@nestjs/common';
import { AccountsModule } from '../../accounts/accounts.module.js';
import { AuditModule } from '../../audit/audit.module.js';
import { FactorRecordsModule } from '../../factors/factor-records.module.js';
import { SessionsModule } from '../../sessions/sessions.module.js';
import { UsersModule } from '../../users/users.module.js';
import { AdminRolesModule } from '../admin-roles.module.js';
import { AccountAdministration } from './account-administration.service.js';
import { AdministratorProtection } from './administrator-protection.js';

/**
 * What an administrator does to a person (issue 48), with its rules: imported by the admin API and
 * by the CLI's users:* commands, so both go through one service. Nothing here issues tokens or
 * loads signing keys, which the CLI must not do for these commands.
 */
@Module({
  imports: [AuditModule, UsersModule, AccountsModule, FactorRecordsModule, SessionsModule, AdminRolesModule],
  providers: [AccountAdministration, AdministratorProtection],
  exports: [AccountAdministration, AdministratorProtection],
})
export class AccountAdministrationModule {}
