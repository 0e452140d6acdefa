import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { FactorRecords } from './factor-records.service.js';
import { PasskeyStore } from './passkey.store.js';
import { RecoveryCodeStore } from './recovery-code.store.js';
import { TotpFactorStore } from './totp-factor.store.js';

/** The factors' tables (one-time codes, recovery codes, passkeys) and what an administrator does with them (users:show, users:mfa-reset); FactorsModule builds on it. */
@Module({
  imports: [AuditModule],
  providers: [TotpFactorStore, RecoveryCodeStore, PasskeyStore, FactorRecords],
  exports: [TotpFactorStore, RecoveryCodeStore, PasskeyStore, FactorRecords],
})
export class FactorRecordsModule {}
