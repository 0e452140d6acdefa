import { Module } from '@nestjs/common';
import { AccountsModule } from '../../accounts/accounts.module.js';
import { AuditModule } from '../../audit/audit.module.js';
import { FactorRecordsModule } from '../../factors/factor-records.module.js';
import { IdentityProvidersModule } from '../../identity-providers/identity-providers.module.js';
import { SessionsModule } from '../../sessions/sessions.module.js';
import { UsersModule } from '../../users/users.module.js';
import { AdminRolesModule } from '../admin-roles.module.js';
import { AccountAdministration } from './account-administration.service.js';
import { AdministratorProtection } from './administrator-protection.js';
import { PersonUpstreamLinks } from './person-upstream-links.service.js';

/**
 * What an administrator does to a person (issue 48), with its rules: imported by the admin API and
 * by the CLI's users:* commands, so both go through one service. Nothing here issues tokens or
 * loads signing keys, which the CLI must not do for these commands.
 */
@Module({
  imports: [AuditModule, UsersModule, AccountsModule, FactorRecordsModule, SessionsModule, AdminRolesModule, IdentityProvidersModule],
  providers: [AccountAdministration, AdministratorProtection, PersonUpstreamLinks],
  exports: [AccountAdministration, AdministratorProtection, PersonUpstreamLinks],
})
export class AccountAdministrationModule {}
