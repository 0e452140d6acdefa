import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { FactorRecords } from './factor-records.service.js';
import { RecoveryCodeStore } from './recovery-code.store.js';
import { TotpFactorStore } from './totp-factor.store.js';

/** The factors' tables and what an administrator does with them (users:show, users:mfa-reset); FactorsModule builds on it. */
@Module({
  imports: [AuditModule],
  providers: [TotpFactorStore, RecoveryCodeStore, FactorRecords],
  exports: [TotpFactorStore, RecoveryCodeStore, FactorRecords],
})
export class FactorRecordsModule {}
