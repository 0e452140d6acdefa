import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../audit/audit.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { CommonModule } from '../common/common.module.js';
import { FactorRecordsModule } from '../factors/factor-records.module.js';
import { FactorsModule } from '../factors/factors.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { UsersModule } from '../users/users.module.js';
import { CeremonyRateLimit } from './ceremony-rate-limit.js';
import { ClonedPasskeys } from './cloned-passkeys.js';
import { PasskeyAccount } from './passkey-account.service.js';
import { PasskeyChallenge } from './passkey-challenge.entity.js';
import { PasskeyChallengeStore } from './passkey-challenge.store.js';
import { PasskeyChallenges } from './passkey-challenges.js';
import { PasskeyLogin } from './passkey-login.service.js';
import { PasskeyRegistration } from './passkey-registration.js';
import { PasskeySignIn } from './passkey-sign-in.js';
import { PasskeysController } from './passkeys.controller.js';
import { PasskeysService } from './passkeys.service.js';

/**
 * Passkeys (issue 33): WebAuthn discoverable credentials a person adds on the account page and
 * signs in with on the sign-in page. Builds on the sign-in session of AuthModule; the passkeys'
 * table is one of the factors' records (FactorRecordsModule), which users:show and users:mfa-reset
 * and the strongest-factor rule read. Exports only PasskeysService (names and dates, never key material).
 */
@Module({
  imports: [CommonModule, AuditModule, RateLimitModule, SessionsModule, UsersModule, AuthModule, FactorsModule, FactorRecordsModule, TypeOrmModule.forFeature([PasskeyChallenge])],
  controllers: [PasskeysController],
  providers: [CeremonyRateLimit, ClonedPasskeys, PasskeyChallengeStore, PasskeyChallenges, PasskeyRegistration, PasskeySignIn, PasskeyAccount, PasskeyLogin, PasskeysService],
  exports: [PasskeysService],
})
export class PasskeysModule {}
