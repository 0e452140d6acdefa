import { Module } from '@nestjs/common';
import { AccessModule } from '../../access/access.module.js';
import { AuditModule } from '../../audit/audit.module.js';
import { CommonModule } from '../../common/common.module.js';
import { GroupsModule } from '../../groups/groups.module.js';
import { IdentityProvidersModule } from '../../identity-providers/identity-providers.module.js';
import { InstancesModule } from '../../instances/instances.module.js';
import { SigningModule } from '../../signing/signing.module.js';
import { AuditEventsController } from './audit-events.controller.js';
import { AdminGroupsController } from './groups.controller.js';
import { AdminIdentityProvidersController } from './identity-providers.controller.js';
import { InstancesController } from './instances.controller.js';
import { SigningKeysController } from './signing-keys.controller.js';
import { OverviewController } from './overview.controller.js';
import { OverviewStore } from './overview.store.js';

/**
 * The admin API's system and audit areas (issue 48): the audit log, signing keys, groups,
 * upstream identity providers, the overview's counts and the instances seen, each through the service its CLI commands call (doctor's route is
 * DoctorApiModule's, the purge's PurgeApiModule's). AdminAccess (AdminApiModule's) decides who may call each route.
 */
@Module({
  imports: [AccessModule, AuditModule, CommonModule, GroupsModule, IdentityProvidersModule, InstancesModule, SigningModule],
  controllers: [AuditEventsController, SigningKeysController, AdminGroupsController, AdminIdentityProvidersController, OverviewController, InstancesController],
  providers: [OverviewStore],
})
export class AdminSystemModule {}
