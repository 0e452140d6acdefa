import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthorizationCode } from './authorization-code.entity.js';
import { CodesService } from './codes.service.js';
import { AuthorizationCodeStore } from './authorization-code.store.js';
import { CommonModule } from '../common/common.module.js';

@Module({
  imports: [CommonModule, TypeOrmModule.forFeature([AuthorizationCode])],
  providers: [AuthorizationCodeStore, CodesService],
  exports: [CodesService, AuthorizationCodeStore],
})
export class CodesModule {}
