import { Module } from '@nestjs/common';
import { AccessModule } from '../../access/access.module.js';
import { ClientsModule } from '../../clients/clients.module.js';
import { ConsentsModule } from '../../consents/consents.module.js';
import { GroupsModule } from '../../groups/groups.module.js';
import { IdentityProvidersModule } from '../../identity-providers/identity-providers.module.js';
import { ResourceServersModule } from '../../resource-servers/resource-servers.module.js';
import { SessionsModule } from '../../sessions/sessions.module.js';
import { AdminClientPeopleController } from './admin-client-people.controller.js';
import { AdminClientsController } from './admin-clients.controller.js';
import { AdminResourceServersController } from './admin-resource-servers.controller.js';
import { AdminClientDeclarationsController } from './client-declarations.controller.js';
import { AdminClientSettingsController } from './client-settings.controller.js';

/**
 * The admin API's area `clients` (issue 48): clients, their grants, sessions, group settings and
 * sign-in rules, clients as code, and resource servers, through the services the CLI uses.
 * AdminAccess (AdminApiModule) decides who may call.
 */
@Module({
  imports: [AccessModule, ClientsModule, ConsentsModule, GroupsModule, IdentityProvidersModule, SessionsModule, ResourceServersModule],
  controllers: [AdminClientsController, AdminClientPeopleController, AdminClientSettingsController, AdminClientDeclarationsController, AdminResourceServersController],
})
export class AdminClientsModule {}
