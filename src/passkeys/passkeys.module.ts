import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../audit/audit.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { CommonModule } from '../common/common.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { UsersModule } from '../users/users.module.js';
import { CeremonyRateLimit } from './ceremony-rate-limit.js';
import { PasskeyAccount } from './passkey-account.service.js';
import { PasskeyChallenge } from './passkey-challenge.entity.js';
import { PasskeyChallengeStore } from './passkey-challenge.store.js';
import { PasskeyChallenges } from './passkey-challenges.js';
import { PasskeyLogin } from './passkey-login.service.js';
import { PasskeyRegistration } from './passkey-registration.js';
import { PasskeySignIn } from './passkey-sign-in.js';
import { Passkey } from './passkey.entity.js';
import { PasskeyStore } from './passkey.store.js';
import { PasskeysController } from './passkeys.controller.js';
import { PasskeysService } from './passkeys.service.js';

/**
 * Passkeys (issue 33): WebAuthn discoverable credentials a person adds on the account page and
 * signs in with on the sign-in page. Builds on the sign-in session of AuthModule; exports only
 * PasskeysService (names and dates, never key material).
 */
@Module({
  imports: [CommonModule, AuditModule, RateLimitModule, UsersModule, AuthModule, TypeOrmModule.forFeature([Passkey, PasskeyChallenge])],
  controllers: [PasskeysController],
  providers: [CeremonyRateLimit, PasskeyStore, PasskeyChallengeStore, PasskeyChallenges, PasskeyRegistration, PasskeySignIn, PasskeyAccount, PasskeyLogin, PasskeysService],
  exports: [PasskeysService],
})
export class PasskeysModule {}
