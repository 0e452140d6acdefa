import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CommonModule } from '../common/common.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { DeviceAuthorization } from './device-authorization.entity.js';
import { DeviceAuthorizationStore } from './device-authorization.store.js';
import { DeviceAuthorizations } from './device-authorizations.service.js';
import { DeviceSessionEnd } from './device-session-end.js';

/**
 * Device authorization requests (RFC 8628): their table, their single decision and single
 * redemption. The endpoint and the grant live in AuthModule, the verification page in device/;
 * consent withdrawal and the purge use the store.
 */
@Module({
  imports: [CommonModule, SessionsModule, TypeOrmModule.forFeature([DeviceAuthorization])],
  providers: [DeviceAuthorizationStore, DeviceAuthorizations, DeviceSessionEnd],
  exports: [DeviceAuthorizations, DeviceAuthorizationStore],
})
export class DeviceCodesModule {}
