import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Consent } from './consent.entity.js';
import { ConsentsService } from './consents.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([Consent])],
  providers: [ConsentsService],
  exports: [ConsentsService],
})
export class ConsentsModule {}
