import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../audit/audit.module.js';
import { ClientsModule } from '../clients/clients.module.js';
import { DeviceCodesModule } from '../device-codes/device-codes.module.js';
import { CodesModule } from '../codes/codes.module.js';
import { CommonModule } from '../common/common.module.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { AccessWithdrawalService } from './access-withdrawal.service.js';
import { Consent } from './consent.entity.js';
import { ConsentStore } from './consent.store.js';
import { ConsentsService } from './consents.service.js';

@Module({
  imports: [CommonModule, AuditModule, ClientsModule, CodesModule, DeviceCodesModule, TokensModule, TypeOrmModule.forFeature([Consent])],
  providers: [ConsentStore, ConsentsService, AccessWithdrawalService],
  exports: [ConsentsService, AccessWithdrawalService],
})
export class ConsentsModule {}
