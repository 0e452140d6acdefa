import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LogoutDelivery } from './logout-delivery.entity.js';
import { LogoutDeliveryStore } from './logout-delivery.store.js';

/** The logout_deliveries table alone: what the purge needs, without the session-end listener and its keys. */
@Module({
  imports: [TypeOrmModule.forFeature([LogoutDelivery])],
  providers: [LogoutDeliveryStore],
  exports: [LogoutDeliveryStore],
})
export class LogoutDeliveryStoreModule {}
