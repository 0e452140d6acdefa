import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../audit/audit.module.js';
import { ResourceServer } from './resource-server.entity.js';
import { ResourceServersService } from './resource-servers.service.js';

/** The resource servers tokens can be restricted to (RFC 8707). */
@Module({
  imports: [AuditModule, TypeOrmModule.forFeature([ResourceServer])],
  providers: [ResourceServersService],
  exports: [ResourceServersService],
})
export class ResourceServersModule {}
