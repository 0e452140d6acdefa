import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ScopesModule } from '../scopes/scopes.module.js';
import { Client } from './client.entity.js';
import { ClientsService } from './clients.service.js';
import { ClientStore } from './client.store.js';
import { SectorIdentifierVerifier } from './sector-identifier.verifier.js';
import { AuditModule } from '../audit/audit.module.js';
import { CommonModule } from '../common/common.module.js';
import { SecurityProfiles } from './security-profile.js';
import { ClientChanges } from './client-changes.js';
import { ClientDeclarations } from './client-declarations.js';

@Module({
  imports: [AuditModule, CommonModule, TypeOrmModule.forFeature([Client]), ScopesModule],
  providers: [ClientStore, ClientsService, SectorIdentifierVerifier, SecurityProfiles, ClientChanges, ClientDeclarations],
  exports: [ClientsService, ClientStore, SecurityProfiles, ClientChanges, ClientDeclarations],
})
export class ClientsModule {}
