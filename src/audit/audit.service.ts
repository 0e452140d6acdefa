import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import type { EntityManager, Repository } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import { Clock } from '../common/clock.js';
import { AuditEvent } from './audit-event.entity.js';

export interface AuditRecord {
  /** `cli`, `client:<id>` or `user:<id>`. */
  actor: string;
  action: string;
  subject: string;
  details?: Record<string, unknown>;
}

/**
 * The audit trail: a row per event (in the caller's transaction when it passes one, so the event
 * and the change stand or fall together) and a structured log line. Never pass secrets in details.
 */
@Injectable()
export class AuditService {
  private readonly logger = new Logger('Audit');

  constructor(
    @InjectRepository(AuditEvent) private readonly events: Repository<AuditEvent>,
    private readonly clock: Clock,
  ) {}

  async record(event: AuditRecord, manager: EntityManager = this.events.manager): Promise<void> {
    const row: AuditEvent = { id: randomUUID(), at: this.clock.now(), actor: event.actor, action: event.action, subject: event.subject, details: event.details ?? {} };
    await manager.insert(AuditEvent, row as QueryDeepPartialEntity<AuditEvent>);
    this.logger.log(JSON.stringify({ audit: { ...row, at: row.at.toISOString() } }));
  }

  /** Newest first. */
  list(limit: number): Promise<AuditEvent[]> {
    return this.events.find({ order: { at: 'DESC' }, take: limit });
  }
}
