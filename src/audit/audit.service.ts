import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { EntityManager, Repository } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import { uuidv7 } from '../common/random.js';
import { Clock } from '../common/clock.js';
import { Transactions } from '../database/transactions.js';
import { AuditEvent } from './audit-event.entity.js';

/**
 * Who made a change: `cli`, `client:<id>` or `user:<id>`; or that with the address the request came
 * from, when an administrator made it over HTTP (issue 48: every change says who, what and from where).
 */
export type AuditActor = string | { readonly actor: string; readonly ip?: string };

export interface AuditRecord {
  actor: AuditActor;
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
    private readonly transactions: Transactions,
  ) {}

  /** Records the event in the caller's transaction, or on its own through Transactions. */
  async record(event: AuditRecord, manager?: EntityManager): Promise<void> {
    // UUIDv7: ordered by time, and monotonic within a millisecond, so the newest-first list is stable.
    const { actor, ip } = typeof event.actor === 'string' ? { actor: event.actor, ip: undefined } : event.actor;
    // The address goes with the details: the events' columns stay who, what and to what.
    const details = ip === undefined ? (event.details ?? {}) : { ...event.details, ip };
    const row: AuditEvent = { id: uuidv7(), at: this.clock.now(), actor, action: event.action, subject: event.subject, details };
    const insert = (within: EntityManager) => within.insert(AuditEvent, row as QueryDeepPartialEntity<AuditEvent>);
    await (manager ? insert(manager) : this.transactions.write(insert));
    this.logger.log(JSON.stringify({ audit: { ...row, at: row.at.toISOString() } }));
  }

  /** Newest first. */
  list(limit: number): Promise<AuditEvent[]> {
    return this.events.find({ order: { at: 'DESC', id: 'DESC' }, take: limit });
  }
}
