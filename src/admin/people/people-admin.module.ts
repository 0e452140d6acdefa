import { Module, type DynamicModule } from '@nestjs/common';
import { ClientsModule } from '../../clients/clients.module.js';
import { ConsentsModule } from '../../consents/consents.module.js';
import { FactorRecordsModule } from '../../factors/factor-records.module.js';
import { SessionsModule } from '../../sessions/sessions.module.js';
import { UsersModule } from '../../users/users.module.js';
import { AdminRolesModule } from '../admin-roles.module.js';
import { AccountAdministrationModule } from './account-administration.module.js';
import { PeopleDirectory } from './people-directory.service.js';
import { PeopleSearchStore } from './people-search.store.js';
import { PersonAccess } from './person-access.service.js';
import { PersonEmailVerification } from './person-email-verification.service.js';
import { PersonInvitations } from './person-invitations.service.js';
import { SessionDirectory } from './session-directory.service.js';

/**
 * The admin API's people (issue 48): the services its controllers call (AdminApiModule declares
 * the controllers, behind AdminAccess). The changes go through AccountAdministration, as the CLI's
 * do (AccountAdministrationModule: AccountAdministration, PersonUpstreamLinks). `invitations`
 * provides INVITATION_SENDER (email-links/'s AdminInvitationsModule): invitations and address verifications.
 */
@Module({})
export class PeopleAdminModule {
  static register(invitations: DynamicModule): DynamicModule {
    return {
      module: PeopleAdminModule,
      imports: [AccountAdministrationModule, AdminRolesModule, UsersModule, FactorRecordsModule, SessionsModule, ClientsModule, ConsentsModule, invitations],
      providers: [PeopleSearchStore, PeopleDirectory, PersonAccess, PersonInvitations, PersonEmailVerification, SessionDirectory],
      exports: [AccountAdministrationModule, PeopleDirectory, PersonAccess, PersonInvitations, PersonEmailVerification, SessionDirectory],
    };
  }
}
