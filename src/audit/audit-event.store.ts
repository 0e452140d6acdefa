import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import { AuditEvent } from './audit-event.entity.js';
import type { AuditFilter } from './audit-filter.js';

/** A place in the newest-first order: the last row of the previous page. */
export interface AuditPosition {
  at: Date;
  id: string;
}

/**
 * The action column of `alias` as IDX_audit_events_action_at reads it: on PostgreSQL under the C
 * collation (the index's, see its migration), so that a comparison with it is a range of that
 * index; compared under the database's own collation it is not, and the read falls back to (at).
 */
export function indexedAuditAction(dataSource: DataSource, alias: string): string {
  return dataSource.options.type === 'postgres' ? `"${alias}"."action" COLLATE "C"` : `"${alias}"."action"`;
}

/**
 * The audit_events table: inserted into, in the changing transaction, and read newest first. A
 * filtered read is one range of one index (audit-event.entity.ts) in (at, id) order, and a page
 * starts where the previous one stopped (a row-value comparison, which both databases seek to).
 */
@Injectable()
export class AuditEventStore {
  private readonly action: string;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.action = indexedAuditAction(dataSource, 'e');
  }

  async insert(rows: AuditEvent | AuditEvent[], manager: EntityManager): Promise<void> {
    await manager.insert(AuditEvent, rows as QueryDeepPartialEntity<AuditEvent> | QueryDeepPartialEntity<AuditEvent>[]);
  }

  /** Up to `limit` events matching every filter, newest first (by time, then id), after `after` when given. */
  page(filter: AuditFilter, after: AuditPosition | null, limit: number): Promise<AuditEvent[]> {
    const query = this.dataSource.manager.createQueryBuilder(AuditEvent, 'e');
    if (filter.actor !== undefined) query.andWhere('"e"."actor" = :actor', { actor: filter.actor });
    if (filter.person !== undefined) query.andWhere('"e"."subject" = :person', { person: `user:${filter.person}` });
    if (filter.client !== undefined) query.andWhere('"e"."subject" = :client', { client: `client:${filter.client}` });
    if (filter.event !== undefined && 'exact' in filter.event) query.andWhere(`${this.action} = :event`, { event: filter.event.exact });
    if (filter.event !== undefined && 'prefix' in filter.event) {
      // A prefix is the range [prefix, prefix with its last character's successor): "client." up to "client/".
      const { prefix } = filter.event;
      const end = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
      query.andWhere(`${this.action} >= :from AND ${this.action} < :to`, { from: prefix, to: end });
    }
    if (filter.since !== undefined) query.andWhere('"e"."at" >= :since', { since: filter.since });
    if (filter.until !== undefined) query.andWhere('"e"."at" < :until', { until: filter.until });
    if (after !== null) query.andWhere('("e"."at", "e"."id") < (:afterAt, :afterId)', { afterAt: after.at, afterId: after.id });
    return query.orderBy('"e"."at"', 'DESC').addOrderBy('"e"."id"', 'DESC').limit(limit).getMany();
  }
}
