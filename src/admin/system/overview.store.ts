import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { IsNull, MoreThanOrEqual, type DataSource } from 'typeorm';
import { AuditEvent } from '../../audit/audit-event.entity.js';
import { indexedAuditAction } from '../../audit/audit-event.store.js';
import { SIGN_IN_FAILURES } from '../../audit/sign-in-failures.js';
import { Client } from '../../clients/client.entity.js';
import { Session } from '../../sessions/session.entity.js';
import { User } from '../../users/user.entity.js';

/** The span the overview's event counts cover, back from now. */
export const RECENT_EVENTS_SPAN_MS = 24 * 3600 * 1000;

/** What happened in that span, each the number of audit events of its kinds. */
const RECENT_EVENTS = {
  signIns: ['user.signed_in'],
  failedSignIns: SIGN_IN_FAILURES,
  newDevices: ['user.new_device'],
  consentsGiven: ['consent.given'],
  consentsWithdrawn: ['consent.withdrawn'],
} as const satisfies Record<string, readonly string[]>;

export type RecentEventCounts = Record<keyof typeof RECENT_EVENTS, number>;

/** The counts of the admin API's overview. */
export interface OverviewCounts {
  people: number;
  activePeople: number;
  clients: number;
  liveSessions: number;
  lastDay: RecentEventCounts;
}

/**
 * How many people, clients and live sessions there are, and how many sign-ins (and the rest of
 * RECENT_EVENTS) the last 24 hours saw (GET /admin/api/v1/overview): one COUNT of each table, one
 * grouped COUNT of the audit log, all at once. Numbers only: every administrator may read them.
 */
@Injectable()
export class OverviewStore {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async counts(now: Date): Promise<OverviewCounts> {
    const manager = this.dataSource.manager;
    const [people, activePeople, clients, liveSessions, lastDay] = await Promise.all([
      manager.count(User),
      manager.countBy(User, { active: true }),
      manager.count(Client),
      manager.countBy(Session, { endedAt: IsNull(), expiresAt: MoreThanOrEqual(now) }),
      this.recentEvents(new Date(now.getTime() - RECENT_EVENTS_SPAN_MS)),
    ]);
    return { people, activePeople, clients, liveSessions, lastDay };
  }

  /**
   * The events of RECENT_EVENTS since `since`, by kind. One statement: the actions compared as
   * IDX_audit_events_action_at (action, at, id) holds them (indexedAuditAction), so each action
   * is one range of that index from `since` on, counted from the index alone (an index-only scan
   * on PostgreSQL, a covering index on SQLite), however long the log.
   */
  private async recentEvents(since: Date): Promise<RecentEventCounts> {
    const actions = [...new Set(Object.values(RECENT_EVENTS).flat())];
    const rows = await this.dataSource.manager
      .createQueryBuilder(AuditEvent, 'e')
      .select('"e"."action"', 'action')
      .addSelect('COUNT(*)', 'count')
      .where(`${indexedAuditAction(this.dataSource, 'e')} IN (:...actions)`, { actions })
      .andWhere('"e"."at" >= :since', { since })
      .groupBy('"e"."action"')
      .getRawMany<{ action: string; count: string | number }>();
    const byAction = new Map(rows.map((row) => [row.action, Number(row.count)]));
    const total = (kinds: readonly string[]) => kinds.reduce((sum, action) => sum + (byAction.get(action) ?? 0), 0);
    return Object.fromEntries(Object.entries(RECENT_EVENTS).map(([name, kinds]) => [name, total(kinds)])) as RecentEventCounts;
  }
}
