import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { UsersModule } from '../users/users.module.js';
import { AccountsService } from './accounts.service.js';

/** A person's account as a whole: the rules that span the person and their sessions. */
@Module({
  imports: [UsersModule, SessionsModule, AuditModule],
  providers: [AccountsService],
  exports: [AccountsService],
})
export class AccountsModule {}
