import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthorizationCode } from './authorization-code.entity.js';
import { CodesService } from './codes.service.js';
import { CommonModule } from '../common/common.module.js';

@Module({
  imports: [CommonModule, TypeOrmModule.forFeature([AuthorizationCode])],
  providers: [CodesService],
  exports: [CodesService],
})
export class CodesModule {}
