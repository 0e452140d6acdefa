import { Module } from '@nestjs/common';
import { CommonModule } from '../common/common.module.js';
import { SubjectsModule } from '../openid/subjects.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { BackchannelLogout } from './backchannel-logout.service.js';
import { LogoutDeliveryStoreModule } from './logout-delivery-store.module.js';

/**
 * Back-channel logout's outbox: sessions that end owe their clients a notification. Also in the
 * CLI, whose commands end sessions too; the sending is BackchannelLogoutSenderModule's, in servers.
 */
@Module({
  imports: [CommonModule, LogoutDeliveryStoreModule, SessionsModule, SubjectsModule],
  providers: [BackchannelLogout],
  exports: [LogoutDeliveryStoreModule],
})
export class LogoutModule {}
