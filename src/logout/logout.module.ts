import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CommonModule } from '../common/common.module.js';
import { SubjectsModule } from '../openid/subjects.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { BackchannelLogout } from './backchannel-logout.service.js';
import { LogoutDelivery } from './logout-delivery.entity.js';
import { LogoutDeliveryStore } from './logout-delivery.store.js';

/**
 * Back-channel logout's outbox: sessions that end owe their clients a notification. Also in the
 * CLI, whose commands end sessions too; the sending is BackchannelLogoutSenderModule's, in servers.
 */
@Module({
  imports: [CommonModule, TypeOrmModule.forFeature([LogoutDelivery]), SessionsModule, SubjectsModule],
  providers: [BackchannelLogout, LogoutDeliveryStore],
  exports: [LogoutDeliveryStore],
})
export class LogoutModule {}
