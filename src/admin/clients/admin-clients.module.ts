import { Module } from '@nestjs/common';
import { AccessModule } from '../../access/access.module.js';
import { ClientsModule } from '../../clients/clients.module.js';
import { ConsentsModule } from '../../consents/consents.module.js';
import { ResourceServersModule } from '../../resource-servers/resource-servers.module.js';
import { SessionsModule } from '../../sessions/sessions.module.js';
import { AdminClientPeopleController } from './admin-client-people.controller.js';
import { AdminClientsController } from './admin-clients.controller.js';
import { AdminResourceServersController } from './admin-resource-servers.controller.js';

/**
 * The admin API's area `clients` (issue 48): clients, their grants and sessions, and resource
 * servers, through the services the CLI uses. AdminAccess (AdminApiModule) decides who may call.
 */
@Module({
  imports: [AccessModule, ClientsModule, ConsentsModule, SessionsModule, ResourceServersModule],
  controllers: [AdminClientsController, AdminClientPeopleController, AdminResourceServersController],
})
export class AdminClientsModule {}
