import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import { dateParameter, execute } from '../database/prepared-statement.js';
import { Transactions } from '../database/transactions.js';
import { EmailLink, type LinkPurpose } from './email-link.entity.js';

/** The email_links table. */
@Injectable()
export class EmailLinkStore {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {}

  /** `work` in one write transaction (retiring the older links and inserting the new one stand together). */
  inTransaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.transactions.write(work);
  }

  async insert(link: EmailLink, manager?: EntityManager): Promise<void> {
    const insert = (within: EntityManager) => within.insert(EmailLink, link as QueryDeepPartialEntity<EmailLink>);
    await (manager ? insert(manager) : this.transactions.write(insert));
  }

  /** The unused, unexpired link with this hash and purpose, without using it (a page showing its form). */
  findUsable(tokenHash: string, purpose: LinkPurpose, now: Date): Promise<EmailLink | null> {
    return this.dataSource.manager
      .createQueryBuilder(EmailLink, 'link')
      .where('link.tokenHash = :tokenHash AND link.purpose = :purpose AND link.usedAt IS NULL AND link.expiresAt > :now', { tokenHash, purpose, now: dateParameter(now, this.dialect) })
      .getOne();
  }

  /**
   * Uses the link up: one conditional UPDATE, so that of two requests (on any instances) with the
   * same link exactly one changes the row. The link as it was, or null (unknown, used, expired).
   */
  async consume(tokenHash: string, purpose: LinkPurpose, now: Date): Promise<EmailLink | null> {
    return this.transactions.write(async (manager) => {
      const date = dateParameter(now, this.dialect);
      const changed = await execute(manager, 'UPDATE "email_links" SET "used_at" = ? WHERE "token_hash" = ? AND "purpose" = ? AND "used_at" IS NULL AND "expires_at" > ?', [date, tokenHash, purpose, date]);
      return changed === 1 ? manager.findOneBy(EmailLink, { tokenHash }) : null;
    });
  }

  /** Earlier unused links of the person for this purpose stop working: only the newest one does. */
  async retireOthers(userId: string, purpose: LinkPurpose, now: Date, manager: EntityManager): Promise<void> {
    const date = dateParameter(now, this.dialect);
    await execute(manager, 'UPDATE "email_links" SET "used_at" = ? WHERE "user_id" = ? AND "purpose" = ? AND "used_at" IS NULL', [date, userId, purpose]);
  }

  /**
   * One bounded DELETE of links that expired before `cutoff`, used or not (PurgeService): the rows
   * written for unknown addresses (a forgotten password asked for nobody) go with them.
   */
  purgeExpired(cutoff: Date, limit: number): Promise<number> {
    const lock = this.dialect === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : '';
    const sql = `DELETE FROM "email_links" WHERE "id" IN (SELECT "id" FROM "email_links" WHERE "expires_at" < ? LIMIT ?${lock})`;
    return this.transactions.write((manager) => execute(manager, sql, [dateParameter(cutoff, this.dialect), limit]));
  }

  private get dialect(): string {
    return this.dataSource.options.type;
  }
}
