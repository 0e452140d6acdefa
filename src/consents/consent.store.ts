import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { EntityRows } from '../database/entity-rows.js';
import type { KeysetPage } from '../database/keyset-page.js';
import { dateParameter, execute, PreparedStatement } from '../database/prepared-statement.js';
import { User } from '../users/user.entity.js';
import { Consent } from './consent.entity.js';

/** A live session's person, what they allowed one client, and whether that client signed them in through it (ConsentStore.signedIn). */
export interface SignedInRow {
  user: User;
  /** The scope the person allowed the client (the union of their grants), or null when they allowed it nothing. */
  consentScope: string | null;
  /** Whether the client already signed the person in through this session (its session_clients row, for back-channel logout). */
  clientRecorded: boolean;
}

/** The consents table: one row per person and client, holding the union of what the person allowed. */
@Injectable()
export class ConsentStore {
  private readonly rows: EntityRows<Consent>;
  private readonly users: EntityRows<User>;
  // Prepared: grant() reads the consent it widens when its caller did not (the password and device grants, a retry).
  private readonly byUserAndClient: PreparedStatement<Record<string, unknown>>;
  // Prepared: every authorization request in a signed-in session asks it (issue 47).
  private readonly signedInStatement: PreparedStatement<Record<string, unknown>>;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.rows = new EntityRows(dataSource.getMetadata(Consent));
    this.users = new EntityRows(dataSource.getMetadata(User));
    this.byUserAndClient = new PreparedStatement(dataSource, 'latchkey_consent', `SELECT ${this.rows.selectList} FROM ${this.rows.table} WHERE "user_id" = ? AND "client_id" = ?`);
    // The session's conditions are SessionStore.isLive's (this user's, neither ended nor expired);
    // its person must exist and be active (issue 46: deactivation ends every session in the same
    // transaction, and this holds even for a session a sign-in racing it started). All four
    // lookups are by primary key or unique index.
    this.signedInStatement = new PreparedStatement(
      dataSource,
      'latchkey_signed_in_consent',
      `SELECT ${this.users.qualifiedSelectList}, "consents"."scope" AS "consentScope", "session_clients"."session_id" IS NOT NULL AS "clientRecorded"` +
        ' FROM "sessions" JOIN "users" ON "users"."id" = "sessions"."user_id"' +
        ' LEFT JOIN "consents" ON "consents"."user_id" = "sessions"."user_id" AND "consents"."client_id" = ?' +
        ' LEFT JOIN "session_clients" ON "session_clients"."session_id" = "sessions"."id" AND "session_clients"."client_id" = ?' +
        ' WHERE "sessions"."id" = ? AND "sessions"."user_id" = ? AND "sessions"."ended_at" IS NULL AND "sessions"."expires_at" >= ? AND "users"."active" IS TRUE',
    );
  }

  async find(userId: string, clientId: string): Promise<Consent | null> {
    const row = await this.byUserAndClient.one(userId, clientId);
    return row ? this.rows.decode(row) : null;
  }

  /**
   * GET /authorize's reads in one round trip (issue 47; the session, the person, the consent and,
   * for OpenID, the session's record of the client were a statement each): the person of session
   * `sessionId` when it is `userId`'s and live at `now`, with what they allowed `clientId` and
   * whether that client signed them in through it. Null when the session is not live, not theirs,
   * or the person is gone or deactivated.
   */
  async signedIn(sessionId: string, userId: string, clientId: string, now: Date): Promise<SignedInRow | null> {
    const row = await this.signedInStatement.one(clientId, clientId, sessionId, userId, dateParameter(now, this.dataSource.options.type));
    if (!row) return null;
    const { consentScope, clientRecorded, ...user } = row;
    // SQLite answers the IS NOT NULL with 1 or 0, PostgreSQL with a boolean.
    return { user: this.users.decode(user), consentScope: (consentScope as string | null) ?? null, clientRecorded: clientRecorded === true || clientRecorded === 1 };
  }

  /** A page of the people who consented to the client, with each person (`user`), by username then person id (one consent per person and client). */
  pageOfClient(clientId: string, page: KeysetPage): Promise<(Consent & { user: User })[]> {
    const query = this.dataSource.manager.createQueryBuilder(Consent, 'consent').innerJoinAndSelect('consent.user', 'person').where('consent.clientId = :clientId', { clientId });
    if (page.after !== null) query.andWhere('(person.username > :username OR (person.username = :username AND person.id > :id))', { username: page.after.value, id: page.after.id });
    return query.orderBy('person.username', 'ASC').addOrderBy('person.id', 'ASC').limit(page.limit + 1).getMany() as Promise<(Consent & { user: User })[]>;
  }

  listOf(userId: string): Promise<Consent[]> {
    return this.dataSource.manager.find(Consent, { where: { userId }, order: { createdAt: 'ASC' } });
  }

  /** One page of the person's consents by client id (the (user, client) unique index), after `afterClientId`. */
  pageOf(userId: string, limit: number, afterClientId: string | null): Promise<Consent[]> {
    const query = this.dataSource.manager.createQueryBuilder(Consent, 'consent').where('consent.userId = :userId', { userId }).orderBy('consent.clientId', 'ASC').take(limit);
    if (afterClientId !== null) query.andWhere('consent.clientId > :afterClientId', { afterClientId });
    return query.getMany();
  }

  /**
   * Writes the person's consent for the client as `scope`, in the caller's transaction, only if
   * the row still holds `current`, the scope the caller read (null: no row); false when it does
   * not, so that the caller reads again rather than overwrite another grant or a withdrawal.
   * A new row takes `id`; an existing row keeps its own (the statements never set it).
   *
   * No row read: an INSERT … ON CONFLICT on the (user, client) unique index (SQLite 3.24+,
   * PostgreSQL 9.5+), which leaves a row another grant wrote meanwhile as it is. A row read: an
   * UPDATE conditioned on its scope, not an upsert with `DO UPDATE … WHERE`, because that would
   * insert the row again had the person withdrawn it meanwhile, bringing back what they took away.
   */
  async write(consent: Pick<Consent, 'id' | 'userId' | 'clientId' | 'scope'>, current: string | null, now: Date, manager: EntityManager): Promise<boolean> {
    const at = dateParameter(now, this.dataSource.options.type);
    const changed =
      current === null
        ? await execute(
            manager,
            'INSERT INTO "consents" ("id", "user_id", "client_id", "scope", "created_at", "updated_at") VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT ("user_id", "client_id") DO NOTHING',
            [consent.id, consent.userId, consent.clientId, consent.scope, at, at],
          )
        : await execute(manager, 'UPDATE "consents" SET "scope" = ?, "updated_at" = ? WHERE "user_id" = ? AND "client_id" = ? AND "scope" = ?', [consent.scope, at, consent.userId, consent.clientId, current]);
    return changed > 0;
  }

  /** Deletes the person's consent for the client, in the caller's transaction; false when there was none. */
  async delete(userId: string, clientId: string, manager: EntityManager): Promise<boolean> {
    return ((await manager.delete(Consent, { userId, clientId })).affected ?? 0) > 0;
  }
}
