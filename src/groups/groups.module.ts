import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../audit/audit.module.js';
import { ClientsModule } from '../clients/clients.module.js';
import { CommonModule } from '../common/common.module.js';
import { ClientGroupSettings } from './client-group-settings.js';
import { GroupAccessRule } from './group-access-rule.js';
import { GroupMember } from './group-member.entity.js';
import { Group } from './group.entity.js';
import { GroupStore } from './group.store.js';
import { GroupsClaim } from './groups-claim.js';
import { GroupsService } from './groups.service.js';
import { MembershipListeners } from './membership-listeners.js';

/**
 * Groups of people (issue 46): managed here (SCIM and the CLI call GroupsService); read by the
 * authentication policy and the refresh grant (GroupAccessRule) and by whatever issues the
 * `groups` claim (GroupsClaim); a client's group settings (ClientGroupSettings). Depends on nothing
 * that issues tokens, so all of those may import it.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Group, GroupMember]), CommonModule, AuditModule, ClientsModule],
  providers: [GroupStore, GroupsService, GroupAccessRule, GroupsClaim, MembershipListeners, ClientGroupSettings],
  exports: [GroupsService, GroupAccessRule, GroupsClaim, MembershipListeners, ClientGroupSettings],
})
export class GroupsModule {}
