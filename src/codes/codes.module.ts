import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthorizationCode } from './authorization-code.entity.js';
import { CodesService } from './codes.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([AuthorizationCode])],
  providers: [CodesService],
  exports: [CodesService],
})
export class CodesModule {}
