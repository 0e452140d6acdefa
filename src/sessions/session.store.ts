import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { IsNull, MoreThanOrEqual, Not, type DataSource, type EntityManager } from 'typeorm';
import { dateParameter, execute } from '../database/prepared-statement.js';
import { Transactions } from '../database/transactions.js';
import { Session } from './session.entity.js';

/**
 * The sessions table, by the hash of the cookie's secret. Writes go through Transactions (on SQLite
 * the group commit), or through the caller's manager when a session change belongs to a larger
 * one (a password change ends the person's sessions in its own transaction).
 */
@Injectable()
export class SessionStore {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {}

  async insert(session: Session): Promise<void> {
    await this.transactions.write((manager) => manager.insert(Session, session));
  }

  /** Whether a session with this id, of this user, has neither ended nor expired at `now`. */
  async isLive(id: string, userId: string, now: Date): Promise<boolean> {
    return (await this.dataSource.manager.countBy(Session, { id, userId, endedAt: IsNull(), expiresAt: MoreThanOrEqual(now) })) === 1;
  }

  /** How many sessions of the user are live at `now`. */
  countLive(userId: string, now: Date): Promise<number> {
    return this.dataSource.manager.countBy(Session, { userId, endedAt: IsNull(), expiresAt: MoreThanOrEqual(now) });
  }

  /** Ends one session; an ended or unknown one is left as it is. */
  async end(id: string, now: Date): Promise<void> {
    await this.transactions.write((manager) => manager.update(Session, { id, endedAt: IsNull() }, { endedAt: now, expiresAt: now }));
  }

  /** Ends every live session of the user but `exceptId`, in the caller's transaction when given; returns how many. */
  async endAllOf(userId: string, now: Date, options: { exceptId?: string; manager?: EntityManager }): Promise<number> {
    const keep = options.exceptId === undefined ? {} : { id: Not(options.exceptId) };
    const work = (manager: EntityManager) => manager.update(Session, { userId, endedAt: IsNull(), ...keep }, { endedAt: now, expiresAt: now });
    const result = options.manager ? await work(options.manager) : await this.transactions.write(work);
    return result.affected ?? 0;
  }

  /** One bounded DELETE of sessions that ended or expired before `cutoff` (ending one pulls its expires_at back); walks the expires_at index. */
  purgeExpired(cutoff: Date, limit: number): Promise<number> {
    const postgres = this.dataSource.options.type === 'postgres';
    const sql = `DELETE FROM "sessions" WHERE "id" IN (SELECT "id" FROM "sessions" WHERE "expires_at" < ? LIMIT ?${postgres ? ' FOR UPDATE SKIP LOCKED' : ''})`;
    return this.transactions.write((manager) => execute(manager, sql, [dateParameter(cutoff, this.dataSource.options.type), limit]));
  }
}
