import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditEvent } from './audit-event.entity.js';
import { AuditService } from './audit.service.js';

/** The audit trail, global: clients, consents, revocation and registration all record into it. */
@Global()
@Module({ imports: [TypeOrmModule.forFeature([AuditEvent])], providers: [AuditService], exports: [AuditService] })
export class AuditModule {}
