import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Consent } from './consent.entity.js';
import { AccessWithdrawalService } from './access-withdrawal.service.js';
import { ConsentsService } from './consents.service.js';
import { CommonModule } from '../common/common.module.js';
import { AuditModule } from '../audit/audit.module.js';

@Module({
  imports: [CommonModule, AuditModule, TypeOrmModule.forFeature([Consent])],
  providers: [ConsentsService, AccessWithdrawalService],
  exports: [ConsentsService, AccessWithdrawalService],
})
export class ConsentsModule {}
