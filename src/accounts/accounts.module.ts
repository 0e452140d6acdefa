import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { CodesModule } from '../codes/codes.module.js';
import { CommonModule } from '../common/common.module.js';
import { DeviceCodesModule } from '../device-codes/device-codes.module.js';
import { GroupsModule } from '../groups/groups.module.js';
import { TokenStoreModule } from '../tokens/token-store.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { UsersModule } from '../users/users.module.js';
import { AccountsService } from './accounts.service.js';

/** A person's account as a whole: the rules that span the person and their sessions. */
@Module({
  imports: [CommonModule, UsersModule, SessionsModule, AuditModule, TokenStoreModule, CodesModule, DeviceCodesModule, GroupsModule],
  providers: [AccountsService],
  exports: [AccountsService],
})
export class AccountsModule {}
