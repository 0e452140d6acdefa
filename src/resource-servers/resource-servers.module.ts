import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../audit/audit.module.js';
import { ClientsModule } from '../clients/clients.module.js';
import { IntrospectionAccess } from './introspection-access.js';
import { ResourceServer } from './resource-server.entity.js';
import { ResourceServersService } from './resource-servers.service.js';
import { ResourceServerStore } from './resource-server.store.js';

/** The resource servers tokens can be restricted to (RFC 8707), and who may introspect their tokens (RFC 7662). */
@Module({
  imports: [AuditModule, ClientsModule, TypeOrmModule.forFeature([ResourceServer])],
  providers: [ResourceServerStore, ResourceServersService, IntrospectionAccess],
  exports: [ResourceServersService, IntrospectionAccess],
})
export class ResourceServersModule {}
