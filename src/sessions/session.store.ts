import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { In, IsNull, MoreThanOrEqual, Not, type DataSource, type EntityManager, type FindOptionsWhere } from 'typeorm';
import { dateParameter, execute } from '../database/prepared-statement.js';
import { Transactions } from '../database/transactions.js';
import { SessionClient } from './session-client.entity.js';
import { SessionEndListeners } from './session-end-listeners.js';
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
    private readonly endListeners: SessionEndListeners,
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

  /**
   * Records that a client signed the person in through this session (once per pair). Plain SQL: it
   * runs on every OpenID authorization, most often finding the pair already there.
   */
  async recordClient(sessionId: string, clientId: string, now: Date): Promise<void> {
    const sql = 'INSERT INTO "session_clients" ("session_id", "client_id", "created_at") VALUES (?, ?, ?) ON CONFLICT DO NOTHING';
    await this.transactions.write((manager) => execute(manager, sql, [sessionId, clientId, dateParameter(now, this.dataSource.options.type)]));
  }

  /** The clients that signed the person in through these sessions. */
  clientsOf(sessionIds: readonly string[], manager: EntityManager): Promise<SessionClient[]> {
    return sessionIds.length === 0 ? Promise.resolve([]) : manager.findBy(SessionClient, { sessionId: In([...sessionIds]) });
  }

  /** Ends one session; an ended or unknown one is left as it is. Its end listeners run in the same transaction. */
  async end(id: string, now: Date): Promise<void> {
    await this.transactions.write((manager) => this.endWhere({ id, endedAt: IsNull() }, now, manager));
  }

  /** Ends every live session of the user but `exceptId`, in the caller's transaction when given; returns how many. */
  async endAllOf(userId: string, now: Date, options: { exceptId?: string; manager?: EntityManager }): Promise<number> {
    const keep = options.exceptId === undefined ? {} : { id: Not(options.exceptId) };
    const work = (manager: EntityManager) => this.endWhere({ userId, endedAt: IsNull(), ...keep }, now, manager);
    return options.manager ? work(options.manager) : this.transactions.write(work);
  }

  /** Ends the live sessions matching `where`, then tells the end listeners which, through the same manager. */
  private async endWhere(where: FindOptionsWhere<Session>, now: Date, manager: EntityManager): Promise<number> {
    const ending = await manager.find(Session, { select: { id: true, userId: true }, where });
    if (ending.length === 0) return 0;
    const result = await manager.update(Session, { id: In(ending.map((session) => session.id)), endedAt: IsNull() }, { endedAt: now, expiresAt: now });
    await this.endListeners.notify(ending.map(({ id, userId }) => ({ id, userId })), manager);
    return result.affected ?? 0;
  }

  /** One bounded DELETE of sessions that ended or expired before `cutoff` (ending one pulls its expires_at back); walks the expires_at index. */
  purgeExpired(cutoff: Date, limit: number): Promise<number> {
    const postgres = this.dataSource.options.type === 'postgres';
    const sql = `DELETE FROM "sessions" WHERE "id" IN (SELECT "id" FROM "sessions" WHERE "expires_at" < ? LIMIT ?${postgres ? ' FOR UPDATE SKIP LOCKED' : ''})`;
    return this.transactions.write((manager) => execute(manager, sql, [dateParameter(cutoff, this.dataSource.options.type), limit]));
  }
}
