import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { MoreThanOrEqual, type DataSource } from 'typeorm';
import { dateParameter, execute } from '../database/prepared-statement.js';
import { Transactions } from '../database/transactions.js';
import { Instance } from './instance.entity.js';

/** The instances table: each server instance's heartbeat, and what the dashboard lists. */
@Injectable()
export class InstanceStore {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {}

  /**
   * One heartbeat, one statement: the row is written the first time (or again, should the purge
   * have taken it while the instance was paused for a day), and only last_seen_at moves after.
   * INSERT … ON CONFLICT DO UPDATE is the same on SQLite (3.24+) and PostgreSQL (9.5+).
   */
  async record(instance: Instance): Promise<void> {
    const date = (value: Date) => dateParameter(value, this.dialect);
    const sql =
      'INSERT INTO "instances" ("id", "hostname", "pid", "version", "node", "heartbeat_seconds", "started_at", "last_seen_at") VALUES (?, ?, ?, ?, ?, ?, ?, ?) ' +
      'ON CONFLICT ("id") DO UPDATE SET "last_seen_at" = excluded."last_seen_at"';
    const parameters = [instance.id, instance.hostname, instance.pid, instance.version, instance.node, instance.heartbeatSeconds, date(instance.startedAt), date(instance.lastSeenAt)];
    await this.transactions.write((manager) => execute(manager, sql, parameters));
  }

  /** The instance stopped gracefully: it is no longer seen at all. */
  async remove(id: string): Promise<void> {
    await this.transactions.write((manager) => execute(manager, 'DELETE FROM "instances" WHERE "id" = ?', [id]));
  }

  /** Those whose last heartbeat is at or after `since`, the latest started first; at most `limit`. */
  seenSince(since: Date, limit: number): Promise<Instance[]> {
    return this.dataSource.manager.find(Instance, { where: { lastSeenAt: MoreThanOrEqual(since) }, order: { startedAt: 'DESC', id: 'ASC' }, take: limit });
  }

  /** One bounded DELETE of instances last seen before `cutoff` (PurgeService): stopped without saying so. */
  purgeUnseen(cutoff: Date, limit: number): Promise<number> {
    const lock = this.dialect === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : '';
    const sql = `DELETE FROM "instances" WHERE "id" IN (SELECT "id" FROM "instances" WHERE "last_seen_at" < ? LIMIT ?${lock})`;
    return this.transactions.write((manager) => execute(manager, sql, [dateParameter(cutoff, this.dialect), limit]));
  }

  private get dialect(): string {
    return this.dataSource.options.type;
  }
}
