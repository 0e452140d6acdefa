import { Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { uuidv7 } from '../common/random.js';
import { Clock } from '../common/clock.js';
import { Transactions } from '../database/transactions.js';
import { actorIp, actorName, type AuditActor } from './audit-actor.js';
import { AuditEvent } from './audit-event.entity.js';
import { AuditEventStore, type AuditPosition } from './audit-event.store.js';
import type { AuditFilter } from './audit-filter.js';

export type { AuditActor } from './audit-actor.js';

export interface AuditRecord {
  /** `cli`, `client:<id>` or `user:<id>`; with the caller's address when the change came over the admin API. */
  actor: AuditActor;
  action: string;
  subject: string;
  details?: Record<string, unknown>;
}

/** How many rows an export reads at a time. */
const EXPORT_BATCH = 500;

/**
 * The audit trail: a row per event (in the caller's transaction when it passes one, so the event
 * and the change stand or fall together) and a structured log line. Never pass secrets in details.
 * Read back by the admin API and `audit:list`, through the same filters (audit-filter.ts).
 */
@Injectable()
export class AuditService {
  private readonly logger = new Logger('Audit');

  constructor(
    private readonly store: AuditEventStore,
    private readonly clock: Clock,
    private readonly transactions: Transactions,
  ) {}

  /** Records the event in the caller's transaction, or on its own through Transactions. */
  async record(event: AuditRecord, manager?: EntityManager): Promise<void> {
    await this.recordAll([event], manager);
  }

  /** Records the events, in this order, with one INSERT (a sign-in from a new device: two events, no more round trips than one). */
  async recordAll(events: readonly AuditRecord[], manager?: EntityManager): Promise<void> {
    // UUIDv7: ordered by time, and monotonic within a millisecond, so the newest-first list is stable.
    const rows = events.map((event): AuditEvent => ({ id: uuidv7(), at: this.clock.now(), actor: actorName(event.actor), ip: actorIp(event.actor), action: event.action, subject: event.subject, details: event.details ?? {} }));
    await (manager ? this.store.insert(rows, manager) : this.transactions.write((within) => this.store.insert(rows, within)));
    for (const row of rows) this.logger.log(JSON.stringify({ audit: { ...row, at: row.at.toISOString() } }));
  }

  /** Up to `limit` events matching `filter` (every event by default), newest first, after `after` (the last of the previous page). */
  list(limit: number, filter: AuditFilter = {}, after: AuditPosition | null = null): Promise<AuditEvent[]> {
    return this.store.page(filter, after, limit);
  }

  /** Every event matching `filter`, newest first, a batch at a time (the JSON-lines export): memory holds one batch, however long the log. */
  async *batches(filter: AuditFilter): AsyncGenerator<AuditEvent[]> {
    let after: AuditPosition | null = null;
    for (;;) {
      const batch = await this.store.page(filter, after, EXPORT_BATCH);
      if (batch.length > 0) yield batch;
      if (batch.length < EXPORT_BATCH) return;
      after = batch[batch.length - 1];
    }
  }
}

/** An event as the admin API and `audit:list` show it. */
export function auditEventView(event: AuditEvent): Record<string, unknown> {
  return { id: event.id, at: event.at.toISOString(), actor: event.actor, ip: event.ip, action: event.action, subject: event.subject, details: event.details };
}
