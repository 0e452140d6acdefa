import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { CommonModule } from '../common/common.module.js';
import { KeysModule } from '../keys/keys.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { FactorSecretCipher } from './factor-secret-cipher.js';
import { SecondFactors } from './second-factors.service.js';
import { FactorRecordsModule } from './factor-records.module.js';

/**
 * Second factors (issue 33): one-time codes (RFC 6238 TOTP) with their recovery codes. The pages
 * that enrol and ask for them are the authorization server's (auth/interaction); this module
 * holds the factors themselves.
 */
@Module({
  imports: [CommonModule, AuditModule, KeysModule, RateLimitModule, FactorRecordsModule],
  providers: [FactorSecretCipher, SecondFactors],
  exports: [SecondFactors],
})
export class FactorsModule {}
