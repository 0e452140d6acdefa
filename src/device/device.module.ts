import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { ClientsModule } from '../clients/clients.module.js';
import { CommonModule } from '../common/common.module.js';
import { ConsentsModule } from '../consents/consents.module.js';
import { DeviceCodesModule } from '../device-codes/device-codes.module.js';
import { FactorsModule } from '../factors/factors.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { ScopesModule } from '../scopes/scopes.module.js';
import { DevicePages } from './device-pages.js';
import { DeviceSignInLevel } from './device-sign-in-level.js';
import { DeviceVerificationController } from './device-verification.controller.js';
import { DeviceVerification } from './device-verification.service.js';

/**
 * The device verification page (RFC 8628 §3.3, issue 35), built on the sign-in session and pages
 * of AuthModule as passkeys/ is; the requests themselves are DeviceCodesModule's, and the device
 * authorization endpoint and the grant live with the other client endpoints in AuthModule.
 */
@Module({
  imports: [CommonModule, AuditModule, AuthModule, ClientsModule, ConsentsModule, DeviceCodesModule, FactorsModule, RateLimitModule, ScopesModule],
  controllers: [DeviceVerificationController],
  providers: [DevicePages, DeviceSignInLevel, DeviceVerification],
})
export class DeviceModule {}
