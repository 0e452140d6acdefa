import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditEvent } from './audit-event.entity.js';
import { AuditEventStore } from './audit-event.store.js';
import { AuditService } from './audit.service.js';
import { CommonModule } from '../common/common.module.js';

/** The audit trail, global: clients, consents, revocation and registration all record into it. */
@Module({ imports: [CommonModule, TypeOrmModule.forFeature([AuditEvent])], providers: [AuditEventStore, AuditService], exports: [AuditService] })
export class AuditModule {}
