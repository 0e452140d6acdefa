import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccessModule } from '../access/access.module.js';
import { AccountsModule } from '../accounts/accounts.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { CommonModule } from '../common/common.module.js';
import { GroupsModule } from '../groups/groups.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { UsersModule } from '../users/users.module.js';
import { ScimDiscoveryController } from './discovery/scim-discovery.controller.js';
import { ScimGroupListing } from './groups/scim-group-listing.js';
import { ScimGroupsController } from './groups/scim-groups.controller.js';
import { ScimGroupsService } from './groups/scim-groups.service.js';
import { ScimClientRequirement } from './http/scim-client.requirement.js';
import { ScimExceptionFilter } from './http/scim-exception.filter.js';
import { ScimRateLimitGuard } from './http/scim-rate-limit.guard.js';
import { EmailInvitations, SCIM_INVITATIONS } from './invitations.js';
import { EmailLinksModule } from '../email-links/email-links.module.js';
import { MailSenderModule } from '../mail/mail-sender.module.js';
import { ScimUser } from './users/scim-user.entity.js';
import { ScimUserListing } from './users/scim-user-listing.js';
import { ScimUserStore } from './users/scim-user.store.js';
import { ScimUsersController } from './users/scim-users.controller.js';
import { ScimUsersService } from './users/scim-users.service.js';
import { UserResources } from './users/user-resources.js';

/**
 * SCIM 2.0 service provider (RFC 7643, RFC 7644; issue 46) at /scim/v2: a directory's connector
 * (Entra ID, Okta) provisions people and groups with a client_credentials token holding `scim`.
 * People through UsersService and AccountsService (deprovisioning), groups through GroupsService.
 */
@Module({
  imports: [TypeOrmModule.forFeature([ScimUser]), CommonModule, AccessModule, RateLimitModule, AuditModule, UsersModule, AccountsModule, GroupsModule, EmailLinksModule.register(MailSenderModule)],
  controllers: [ScimUsersController, ScimGroupsController, ScimDiscoveryController],
  providers: [
    ScimUserStore,
    UserResources,
    ScimUsersService,
    ScimUserListing,
    ScimGroupsService,
    ScimGroupListing,
    ScimClientRequirement,
    ScimRateLimitGuard,
    ScimExceptionFilter,
    { provide: SCIM_INVITATIONS, useClass: EmailInvitations },
  ],
})
export class ProvisioningModule {}
