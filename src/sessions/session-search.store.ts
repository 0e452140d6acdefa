import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { escapeLike } from '../database/keyset-page.js';
import type { User } from '../users/user.entity.js';
import { SessionClient } from './session-client.entity.js';
import { Session } from './session.entity.js';

/** What the admin API's list of every live session narrows to (issue 48); each filter given narrows further (they are ANDed). */
export interface LiveSessionFilter {
  /** The person's id. */
  person?: string;
  /** Sessions through which this client signed the person in (session_clients). */
  client?: string;
  /** The address it was started from: exactly, or every address whose text starts with `prefix` (`203.0.113.`). */
  ip?: { exact: string } | { prefix: string };
  /** Part of the device's description, in any case (`firefox`). */
  device?: string;
  /** Started at or after. */
  since?: Date;
  /** Started before. */
  until?: Date;
}

/** A place in the newest-first order: the last session of the previous page. */
export interface LiveSessionPosition {
  createdAt: Date;
  publicId: string;
}

export type SessionWithPerson = Session & { user: Pick<User, 'id' | 'username'> };

/**
 * Every person's live sessions (issue 48: the help desk's "end a stolen laptop's sessions"),
 * newest first by created_at then public_id, a keyset page at a time. Live is `ended_at IS NULL
 * AND expires_at >= now`. The index each common question reads (the plans are checked on both
 * dialects by test/integration/live-sessions-plans.spec.ts):
 * - everyone's: the expires_at index's range from now on, which holds only the live sessions
 *   (ending one pulls its expires_at back), sorted: SESSION_TTL_SECONDS of sign-ins at most, where
 *   an index on created_at would cost every sign-in a write to spare an admin page a sort;
 * - a person's: the user_id index;
 * - a client's: session_clients' client_id index (migration SessionListIndexes1767200200000),
 *   then each session by its key. A join rather than EXISTS, so that SQLite can start there too.
 * The address and device filters narrow what those read; a device is a substring, which no index serves.
 */
@Injectable()
export class SessionSearchStore {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Up to `limit` sessions live at `now` matching every filter, each with its person's id and username, after `after` when given. */
  page(filter: LiveSessionFilter, now: Date, limit: number, after: LiveSessionPosition | null): Promise<SessionWithPerson[]> {
    const query = this.dataSource.manager
      .createQueryBuilder(Session, 'session')
      .innerJoin('session.user', 'person')
      .addSelect(['person.id', 'person.username'])
      .where('session.endedAt IS NULL AND session.expiresAt >= :now', { now });
    if (filter.person !== undefined) query.andWhere('session.userId = :person', { person: filter.person });
    // At most one row per session: (session_id, client_id) is session_clients' primary key.
    if (filter.client !== undefined) query.innerJoin(SessionClient, 'record', 'record.sessionId = session.id AND record.clientId = :client', { client: filter.client });
    if (filter.ip !== undefined && 'exact' in filter.ip) query.andWhere('session.ip = :ip', { ip: filter.ip.exact });
    // LIKE's wildcards in a filter are literal characters (ESCAPE names the backslash for both dialects).
    if (filter.ip !== undefined && 'prefix' in filter.ip) query.andWhere("session.ip LIKE :ipPrefix ESCAPE '\\'", { ipPrefix: `${escapeLike(filter.ip.prefix)}%` });
    if (filter.device !== undefined) query.andWhere("LOWER(session.device) LIKE :device ESCAPE '\\'", { device: `%${escapeLike(filter.device.toLowerCase())}%` });
    if (filter.since !== undefined) query.andWhere('session.createdAt >= :since', { since: filter.since });
    if (filter.until !== undefined) query.andWhere('session.createdAt < :until', { until: filter.until });
    if (after !== null) {
      query.andWhere('(session.createdAt < :afterAt OR (session.createdAt = :afterAt AND session.publicId < :afterId))', { afterAt: after.createdAt, afterId: after.publicId });
    }
    return query.orderBy('session.createdAt', 'DESC').addOrderBy('session.publicId', 'DESC').limit(limit).getMany() as Promise<SessionWithPerson[]>;
  }

  /** The person whose session, live at `now`, has this public id; undefined when none has. */
  async ownerOfLive(publicId: string, now: Date): Promise<string | undefined> {
    const session = await this.dataSource.manager
      .createQueryBuilder(Session, 'session')
      .select(['session.id', 'session.userId'])
      .where('session.publicId = :publicId AND session.endedAt IS NULL AND session.expiresAt >= :now', { publicId, now })
      .getOne();
    return session?.userId;
  }
}
