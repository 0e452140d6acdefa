import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { LessThanOrEqual, type DataSource, type EntityManager } from 'typeorm';
import { dateParameter, execute } from '../database/prepared-statement.js';
import { Transactions } from '../database/transactions.js';
import { DeliveryStatus, LogoutDelivery } from './logout-delivery.entity.js';

/** The logout_deliveries table: the outbox of back-channel logout notifications. */
@Injectable()
export class LogoutDeliveryStore {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {}

  /** In the caller's transaction: the one that ended the session. */
  async enqueue(deliveries: LogoutDelivery[], manager: EntityManager): Promise<void> {
    if (deliveries.length > 0) await manager.insert(LogoutDelivery, deliveries);
  }

  /**
   * Claims up to `limit` notifications due at `now` for this instance: each is taken by a
   * conditional UPDATE that moves its next attempt to `leaseUntil` and counts the attempt (the count
   * being the row's version), so of
   * several instances exactly one wins each (the affected-row count says which), on any database.
   * An instance that dies mid-send leaves the lease to expire, and another one retries.
   */
  async claimDue(now: Date, leaseUntil: Date, limit: number): Promise<LogoutDelivery[]> {
    const due = await this.dataSource.manager.find(LogoutDelivery, {
      where: { status: DeliveryStatus.Pending, nextAttemptAt: LessThanOrEqual(now) },
      order: { nextAttemptAt: 'ASC' },
      take: limit,
    });
    const claimed: LogoutDelivery[] = [];
    for (const delivery of due) {
      const result = await this.transactions.write((manager) =>
        manager.update(
          LogoutDelivery,
          // attempts is the row's version: of two instances that read it, only the first UPDATE matches.
          { id: delivery.id, status: DeliveryStatus.Pending, attempts: delivery.attempts, nextAttemptAt: LessThanOrEqual(now) },
          { nextAttemptAt: leaseUntil, attempts: delivery.attempts + 1 },
        ),
      );
      if (result.affected === 1) claimed.push({ ...delivery, attempts: delivery.attempts + 1, nextAttemptAt: leaseUntil });
    }
    return claimed;
  }

  async delivered(id: string, now: Date): Promise<void> {
    await this.transactions.write((manager) => manager.update(LogoutDelivery, { id }, { status: DeliveryStatus.Delivered, deliveredAt: now, lastError: null }));
  }

  /** A failed attempt: tried again at `retryAt`, or given up on (failed) when there is none. */
  async attemptFailed(id: string, error: string, retryAt: Date | null): Promise<void> {
    const change = retryAt === null ? { status: DeliveryStatus.Failed, lastError: error } : { nextAttemptAt: retryAt, lastError: error };
    await this.transactions.write((manager) => manager.update(LogoutDelivery, { id }, change));
  }

  /** One bounded DELETE of notifications delivered or given up on before `cutoff`: the record is kept that long, then goes. */
  purgeFinished(cutoff: Date, limit: number): Promise<number> {
    const dialect = this.dataSource.options.type;
    const sql =
      'DELETE FROM "logout_deliveries" WHERE "id" IN (SELECT "id" FROM "logout_deliveries" WHERE "status" <> ? AND "created_at" < ? LIMIT ?' +
      `${dialect === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : ''})`;
    return this.transactions.write((manager) => execute(manager, sql, [DeliveryStatus.Pending, dateParameter(cutoff, dialect), limit]));
  }

  /** Every notification for a client, newest first (tests, and an operator's look at what happened). */
  forClient(clientId: string): Promise<LogoutDelivery[]> {
    return this.dataSource.manager.find(LogoutDelivery, { where: { clientId }, order: { createdAt: 'DESC' } });
  }
}
