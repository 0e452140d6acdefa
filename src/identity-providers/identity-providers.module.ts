import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../audit/audit.module.js';
import { CommonModule } from '../common/common.module.js';
import { UsersModule } from '../users/users.module.js';
import { ClientsModule } from '../clients/clients.module.js';
import { GroupsModule } from '../groups/groups.module.js';
import { IdentityProvider } from './identity-provider.entity.js';
import { IdentityProviderStore } from './identity-provider.store.js';
import { IdentityProvidersService } from './identity-providers.service.js';
import { UpstreamAccounts } from './upstream-accounts.service.js';
import { UpstreamLink } from './upstream-link.entity.js';
import { UpstreamGroupMembership } from './upstream-group-membership.entity.js';
import { UpstreamGroupMembershipStore } from './upstream-group-membership.store.js';
import { UpstreamGroups } from './upstream-groups.js';
import { SignInMethods } from './sign-in-methods.js';
import { SignOutRedirects } from './sign-out-redirects.js';
import { UpstreamOrigins } from './upstream-origins.js';
import { UpstreamSession } from './upstream-session.entity.js';
import { UpstreamSessionStore } from './upstream-session.store.js';

/**
 * Upstream identity providers and the people linked to them (issue 45): what an administrator
 * configures and what the sign-in page offers. The sign-in flows themselves are federation/'s.
 */
@Module({
  imports: [TypeOrmModule.forFeature([IdentityProvider, UpstreamLink, UpstreamSession, UpstreamGroupMembership]), ClientsModule, CommonModule, AuditModule, UsersModule, GroupsModule],
  providers: [IdentityProviderStore, IdentityProvidersService, UpstreamAccounts, UpstreamGroups, UpstreamGroupMembershipStore, SignInMethods, SignOutRedirects, UpstreamOrigins, UpstreamSessionStore],
  exports: [IdentityProvidersService, UpstreamAccounts, SignInMethods, SignOutRedirects, UpstreamOrigins, UpstreamSessionStore],
})
export class IdentityProvidersModule {}
