import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ScopesModule } from '../scopes/scopes.module.js';
import { Client } from './client.entity.js';
import { ClientsService } from './clients.service.js';
import { AuditModule } from '../audit/audit.module.js';

@Module({
  imports: [AuditModule, TypeOrmModule.forFeature([Client]), ScopesModule],
  providers: [ClientsService],
  exports: [ClientsService],
})
export class ClientsModule {}
