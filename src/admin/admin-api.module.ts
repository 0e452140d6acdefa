import { Module, type DynamicModule } from '@nestjs/common';
import { AccessModule } from '../access/access.module.js';
import { ClientsModule } from '../clients/clients.module.js';
import { UsersModule } from '../users/users.module.js';
import { AdminAccess } from './admin-access.js';
import { AdminRolesController } from './admin-roles.controller.js';
import { AdminRolesModule } from './admin-roles.module.js';
import { PeopleAdminModule } from './people/people-admin.module.js';
import { PeopleController } from './people/people.controller.js';
import { PersonAccessController } from './people/person-access.controller.js';
import { PersonLinksController } from './people/person-links.controller.js';
import { PersonSecurityController } from './people/person-security.controller.js';
import { SessionsController } from './people/sessions.controller.js';
import { AdminSystemModule } from './system/admin-system.module.js';
import { AdminClientsModule } from './clients/admin-clients.module.js';

/**
 * The admin API (issue 48) at /admin/api/v1: what the CLI does, over HTTP, for administrators'
 * own sign-ins and service clients holding admin scopes. Its controllers call the same services
 * as the CLI, so a rule and its audit event live in one place; AdminAccess decides who may call.
 * `invitations` provides the invitations' sender (email-links/ builds on auth/, which builds on
 * this folder, so the application hands it in, as it hands email-links/ its mail transport).
 */
@Module({})
export class AdminApiModule {
  static register(invitations: DynamicModule): DynamicModule {
    return {
      module: AdminApiModule,
      imports: [AccessModule, AdminRolesModule, ClientsModule, UsersModule, PeopleAdminModule.register(invitations), AdminSystemModule, AdminClientsModule],
      controllers: [AdminRolesController, PeopleController, PersonSecurityController, PersonAccessController, PersonLinksController, SessionsController],
      providers: [AdminAccess],
    };
  }
}
