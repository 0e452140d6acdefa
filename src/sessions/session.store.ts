import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Brackets, In, IsNull, MoreThanOrEqual, Not, type DataSource, type EntityManager, type FindOptionsWhere } from 'typeorm';
import type { KeysetPage } from '../database/keyset-page.js';
import { dateParameter, execute, executeReturning, PreparedStatement } from '../database/prepared-statement.js';
import { Transactions } from '../database/transactions.js';
import { DEVICE_MEMORY_DAYS, type DeviceHistory } from './device-history.js';
import { SessionClient } from './session-client.entity.js';
import { SessionEndListeners } from './session-end-listeners.js';
import { Session } from './session.entity.js';
import type { User } from '../users/user.entity.js';

/**
 * The sessions table, by the hash of the cookie's secret. Writes go through Transactions (on SQLite
 * the group commit), or through the caller's manager when a session change belongs to a larger
 * one (a password change ends the person's sessions in its own transaction).
 */
@Injectable()
export class SessionStore {
  // Prepared: every signed-in page checks its session, and every OpenID consent its client record (GET /authorize reads both with the consent: ConsentStore.signedIn).
  private readonly live: PreparedStatement<{ live: number }>;
  private readonly clientRecorded: PreparedStatement<{ recorded: number }>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
    private readonly endListeners: SessionEndListeners,
  ) {
    this.live = new PreparedStatement(
      dataSource,
      'latchkey_session_live',
      'SELECT 1 AS "live" FROM "sessions" WHERE "id" = ? AND "user_id" = ? AND "ended_at" IS NULL AND "expires_at" >= ?',
    );
    this.clientRecorded = new PreparedStatement(dataSource, 'latchkey_session_client', 'SELECT 1 AS "recorded" FROM "session_clients" WHERE "session_id" = ? AND "client_id" = ?');
  }

  /**
   * Starts a session, only for a person who is active (issue 46): the INSERT is gated on the users
   * row in the same statement, so a sign-in that races a deactivation starts nothing once the
   * deactivation commits, on any instance. Null when the person is inactive or gone; else what
   * their sessions of the last DEVICE_MEMORY_DAYS say about this one's device (issue 48), read by
   * the same statement (its RETURNING clause: no other round trip). The new row is left out of
   * that read by its id: SQLite's RETURNING sees the row just inserted, PostgreSQL's does not.
   */
  async insert(session: Session, alsoWithin?: (manager: EntityManager, devices: DeviceHistory) => Promise<void>): Promise<DeviceHistory | null> {
    const dialect = this.dataSource.options.type;
    const cast = (type: string) => (dialect === 'postgres' ? `?::${type}` : '?');
    const sql =
      `INSERT INTO "sessions" ("id", "user_id", "public_id", "created_at", "expires_at", "ended_at", "ip", "device") SELECT ${cast('varchar')}, ${cast('uuid')}, ${cast('uuid')}, ${cast('timestamptz')}, ${cast('timestamptz')}, ${cast('timestamptz')}, ${cast('varchar')}, ${cast('varchar')}` +
      ' WHERE EXISTS (SELECT 1 FROM "users" WHERE "id" = ? AND "active" IS TRUE)' +
      ' RETURNING (SELECT max(CASE WHEN "seen"."device" = "sessions"."device" THEN 2 ELSE 1 END) FROM "sessions" "seen"' +
      ' WHERE "seen"."user_id" = "sessions"."user_id" AND "seen"."id" <> "sessions"."id" AND "seen"."device" IS NOT NULL AND "seen"."expires_at" >= ?) AS "seen"';
    const date = (value: Date | null) => (value === null ? null : dateParameter(value, dialect));
    const remembered = new Date(session.createdAt.getTime() - DEVICE_MEMORY_DAYS * 24 * 3600 * 1000);
    const parameters = [session.id, session.userId, session.publicId, date(session.createdAt), date(session.expiresAt), date(session.endedAt), session.ip, session.device, session.userId, date(remembered)];
    const started = async (manager: EntityManager): Promise<DeviceHistory | null> => {
      const [row] = await executeReturning<{ seen: number | string | null }>(manager, sql, parameters);
      // 2: a session of theirs on this device; 1: sessions on other devices only; null: no session that recorded a device.
      return row === undefined ? null : row.seen === null ? 'first' : Number(row.seen) === 2 ? 'known' : 'new';
    };
    if (!alsoWithin) return this.transactions.write(started);
    // `alsoWithin` commits with the session or not at all (the sign-in's audit events, issue 48): only once the gated INSERT started one.
    return this.transactions.run(async (manager) => {
      const devices = await started(manager);
      if (devices !== null) await alsoWithin(manager, devices);
      return devices;
    });
  }

  /** Whether a session with this id, of this user, has neither ended nor expired at `now`. */
  async isLive(id: string, userId: string, now: Date): Promise<boolean> {
    return (await this.live.one(id, userId, dateParameter(now, this.dataSource.options.type))) !== undefined;
  }

  /**
   * Records that a client signed the person in through this session (once per pair). It runs on
   * every OpenID authorization, most often finding the pair already there: a prepared read answers
   * that without a write, unless the caller read it already (`recorded`: GET /authorize's one
   * statement, ConsentStore.signedIn); the INSERT's ON CONFLICT settles two instances recording the same pair.
   */
  async recordClient(sessionId: string, clientId: string, now: Date, recorded?: boolean): Promise<void> {
    if (recorded ?? ((await this.clientRecorded.one(sessionId, clientId)) !== undefined)) return;
    const sql = 'INSERT INTO "session_clients" ("session_id", "client_id", "created_at") VALUES (?, ?, ?) ON CONFLICT DO NOTHING';
    await this.transactions.write((manager) => execute(manager, sql, [sessionId, clientId, dateParameter(now, this.dataSource.options.type)]));
  }

  /**
   * One page of the user's sessions live at `now`, newest first (keyset on created_at, then
   * public_id: the user_id index narrows it to one person's few rows).
   */
  livePageOf(userId: string, now: Date, limit: number, after: { createdAt: Date; publicId: string } | null): Promise<Session[]> {
    const query = this.dataSource.manager
      .createQueryBuilder(Session, 'session')
      .where('session.userId = :userId AND session.endedAt IS NULL AND session.expiresAt >= :now', { userId, now })
      .orderBy('session.createdAt', 'DESC')
      .addOrderBy('session.publicId', 'DESC')
      .take(limit);
    if (after) {
      query.andWhere(new Brackets((or) => or.where('session.createdAt < :at', { at: after.createdAt }).orWhere('session.createdAt = :at AND session.publicId < :publicId', { publicId: after.publicId })));
    }
    return query.getMany();
  }

  /** Ends the user's live session named `publicId`, in the caller's transaction; 1 when it did, else 0. */
  endLiveByPublicId(userId: string, publicId: string, now: Date, manager: EntityManager): Promise<number> {
    return this.endWhere({ userId, publicId, endedAt: IsNull(), expiresAt: MoreThanOrEqual(now) }, now, manager);
  }

  /** The clients that signed the person in through these sessions. */
  clientsOf(sessionIds: readonly string[], manager: EntityManager = this.dataSource.manager): Promise<SessionClient[]> {
    return sessionIds.length === 0 ? Promise.resolve([]) : manager.findBy(SessionClient, { sessionId: In([...sessionIds]) });
  }

  /**
   * A page of the sessions live at `now` in which the client signed the person in (session_clients),
   * each with its session and person, newest sign-in first: the keyset is the session's created_at
   * (the clock's milliseconds, so its ISO text compares exactly) and row id.
   */
  liveWithClient(clientId: string, now: Date, page: KeysetPage): Promise<(SessionClient & { session: Session & { user: User } })[]> {
    const query = this.liveWithClientQuery(clientId, now).innerJoinAndSelect('session.user', 'person');
    if (page.after !== null) {
      query.andWhere('(session.createdAt < :at OR (session.createdAt = :at AND session.id < :id))', { at: new Date(page.after.value), id: page.after.id });
    }
    return query.orderBy('session.createdAt', 'DESC').addOrderBy('session.id', 'DESC').limit(page.limit + 1).getMany() as Promise<(SessionClient & { session: Session & { user: User } })[]>;
  }

  /** How many sessions live at `now` the client signed the person in through. */
  countLiveWithClient(clientId: string, now: Date): Promise<number> {
    return this.liveWithClientQuery(clientId, now).getCount();
  }

  private liveWithClientQuery(clientId: string, now: Date) {
    return this.dataSource.manager
      .createQueryBuilder(SessionClient, 'record')
      .innerJoinAndSelect('record.session', 'session')
      .where('record.clientId = :clientId', { clientId })
      .andWhere('session.endedAt IS NULL')
      .andWhere('session.expiresAt >= :now', { now });
  }

  /** Ends one session; an ended or unknown one is left as it is. Its end listeners run in the same transaction. */
  async end(id: string, now: Date): Promise<void> {
    await this.transactions.write((manager) => this.endWhere({ id, endedAt: IsNull() }, now, manager));
  }

  /**
   * Ends the live sessions among these rows; returns how many. Live, not merely unended: expired
   * sessions stay DEVICE_MEMORY_DAYS (device-history.ts), and ending one would tell its clients
   * (back-channel logout) of a session that was over long ago, and count it.
   */
  endRows(ids: readonly string[], now: Date): Promise<number> {
    return this.transactions.write((manager) => this.endWhere({ id: In([...ids]), endedAt: IsNull(), expiresAt: MoreThanOrEqual(now) }, now, manager));
  }

  /** Ends every live session of the user but `exceptId`, in the caller's transaction when given; returns how many (live, as endRows says why). */
  async endAllOf(userId: string, now: Date, options: { exceptId?: string; manager?: EntityManager }): Promise<number> {
    const keep = options.exceptId === undefined ? {} : { id: Not(options.exceptId) };
    const work = (manager: EntityManager) => this.endWhere({ userId, endedAt: IsNull(), expiresAt: MoreThanOrEqual(now), ...keep }, now, manager);
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

  /**
   * One bounded DELETE of sessions that ended or expired before `cutoff` (ending one pulls its
   * expires_at back); walks the expires_at index. The purge passes a cutoff DEVICE_MEMORY_DAYS
   * back, so that sign-ins can be compared with the devices of the sessions of that time.
   */
  purgeExpired(cutoff: Date, limit: number): Promise<number> {
    const postgres = this.dataSource.options.type === 'postgres';
    const sql = `DELETE FROM "sessions" WHERE "id" IN (SELECT "id" FROM "sessions" WHERE "expires_at" < ? LIMIT ?${postgres ? ' FOR UPDATE SKIP LOCKED' : ''})`;
    return this.transactions.write((manager) => execute(manager, sql, [dateParameter(cutoff, this.dataSource.options.type), limit]));
  }
}
