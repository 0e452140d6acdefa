import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { EntityRows } from '../database/entity-rows.js';
import type { Gate } from '../database/gate.js';
import { dateParameter, execute, PreparedStatement } from '../database/prepared-statement.js';
import { Transactions } from '../database/transactions.js';
import { DeviceAuthorization, DeviceAuthorizationStatus } from './device-authorization.entity.js';

/** A new row, as DeviceAuthorizations.start writes it. */
export type DeviceAuthorizationInsert = Pick<DeviceAuthorization, 'id' | 'deviceCodeHash' | 'userCodeHash' | 'clientId' | 'scope' | 'intervalSeconds' | 'expiresAt' | 'createdAt'>;

/** The person's answer: who, how they signed in, in which session. */
export interface DeviceDecision {
  status: typeof DeviceAuthorizationStatus.Approved | typeof DeviceAuthorizationStatus.Denied;
  userId: string;
  authTime: Date | null;
  amr: string | null;
  sid: string | null;
}

/** RFC 8628 §3.5: each slow_down makes the interval 5 seconds longer. */
export const SLOW_DOWN_SECONDS = 5;

/**
 * The device_authorizations table, in plain SQL: the INSERT at /device_authorization, the lookups
 * by hash, and the conditional UPDATEs that decide a request once, space the device's polls and
 * redeem it once (on whichever instance each request reaches).
 */
@Injectable()
export class DeviceAuthorizationStore {
  private readonly rows: EntityRows<DeviceAuthorization>;
  private readonly byDeviceCode: PreparedStatement<Record<string, unknown>>;
  private readonly pendingByUserCode: PreparedStatement<Record<string, unknown>>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {
    this.rows = new EntityRows(dataSource.getMetadata(DeviceAuthorization));
    this.byDeviceCode = new PreparedStatement(dataSource, 'latchkey_device_by_code', `SELECT ${this.rows.selectList} FROM ${this.rows.table} WHERE "device_code_hash" = ?`);
    this.pendingByUserCode = new PreparedStatement(
      dataSource,
      'latchkey_device_pending_by_user_code',
      `SELECT ${this.rows.selectList} FROM ${this.rows.table} WHERE "user_code_hash" = ? AND "status" = '${DeviceAuthorizationStatus.Pending}' AND "expires_at" > ?`,
    );
  }

  private get dialect(): string {
    return this.dataSource.options.type;
  }

  private date(date: Date): Date | string {
    return dateParameter(date, this.dialect);
  }

  async insert(row: DeviceAuthorizationInsert): Promise<void> {
    const sql =
      'INSERT INTO "device_authorizations" ("id", "device_code_hash", "user_code_hash", "client_id", "scope", "status", "interval_seconds", "expires_at", "created_at") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)';
    const parameters = [row.id, row.deviceCodeHash, row.userCodeHash, row.clientId, row.scope, DeviceAuthorizationStatus.Pending, row.intervalSeconds, this.date(row.expiresAt), this.date(row.createdAt)];
    await this.transactions.write((manager) => execute(manager, sql, parameters));
  }

  async findByDeviceCodeHash(hash: string): Promise<DeviceAuthorization | null> {
    const row = await this.byDeviceCode.one(hash);
    return row ? this.rows.decode(row) : null;
  }

  /** The request a user code names, while it waits for a decision and has not expired. */
  async findPendingByUserCodeHash(hash: string, now: Date): Promise<DeviceAuthorization | null> {
    const row = await this.pendingByUserCode.one(hash, this.date(now));
    return row ? this.rows.decode(row) : null;
  }

  /** Records the person's answer with one conditional UPDATE: true for exactly one decision, before expiry, in the caller's transaction. */
  async decide(id: string, decision: DeviceDecision, now: Date, manager: EntityManager): Promise<boolean> {
    const sql =
      'UPDATE "device_authorizations" SET "status" = ?, "user_id" = ?, "auth_time" = ?, "amr" = ?, "sid" = ?, "decided_at" = ? WHERE "id" = ? AND "status" = ? AND "expires_at" > ?';
    const authTime = decision.authTime === null ? null : this.date(decision.authTime);
    const parameters = [decision.status, decision.userId, authTime, decision.amr, decision.sid, this.date(now), id, DeviceAuthorizationStatus.Pending, this.date(now)];
    return (await execute(manager, sql, parameters)) === 1;
  }

  /**
   * A poll of a pending request that respects the interval (RFC 8628 §3.5): records it, and is true,
   * only if the last poll was at least `intervalSeconds` before `now` and the interval is still the
   * one read (two concurrent polls: one is on time, the other too fast).
   */
  async pollOnTime(id: string, intervalSeconds: number, now: Date): Promise<boolean> {
    const sql =
      'UPDATE "device_authorizations" SET "last_polled_at" = ? WHERE "id" = ? AND "status" = ? AND "interval_seconds" = ? AND ("last_polled_at" IS NULL OR "last_polled_at" <= ?)';
    const earliest = new Date(now.getTime() - intervalSeconds * 1000);
    const parameters = [this.date(now), id, DeviceAuthorizationStatus.Pending, intervalSeconds, this.date(earliest)];
    return (await this.transactions.write((manager) => execute(manager, sql, parameters))) === 1;
  }

  /** §3.5 slow_down: "the interval MUST be increased by 5 seconds for this and all subsequent requests", counted from this poll. */
  async slowDown(id: string, now: Date): Promise<void> {
    const sql = `UPDATE "device_authorizations" SET "interval_seconds" = "interval_seconds" + ${SLOW_DOWN_SECONDS}, "last_polled_at" = ? WHERE "id" = ?`;
    await this.transactions.write((manager) => execute(manager, sql, [this.date(now), id]));
  }

  /** The conditional UPDATE that redeems an approved request once, before it expires, as the gate of the tokens it yields (TokenStore.insertAfter). */
  redeemGate(id: string, now: Date): Gate {
    return {
      name: 'device',
      sql: 'UPDATE "device_authorizations" SET "status" = ? WHERE "id" = ? AND "status" = ? AND "expires_at" > ?',
      parameters: [DeviceAuthorizationStatus.Redeemed, id, DeviceAuthorizationStatus.Approved, this.date(now)],
    };
  }

  /** Consent withdrawn: what the person approved for the client and the device has not yet redeemed will not be (in the caller's transaction). */
  async denyApprovedOf(userId: string, clientId: string, manager: EntityManager): Promise<number> {
    const sql = 'UPDATE "device_authorizations" SET "status" = ? WHERE "user_id" = ? AND "client_id" = ? AND "status" = ?';
    return execute(manager, sql, [DeviceAuthorizationStatus.Denied, userId, clientId, DeviceAuthorizationStatus.Approved]);
  }

  /** The person was deactivated (issue 46): nothing they approved is picked up by any device (in the caller's transaction). */
  async denyApprovedOfPerson(userId: string, manager: EntityManager): Promise<number> {
    const sql = 'UPDATE "device_authorizations" SET "status" = ? WHERE "user_id" = ? AND "status" = ?';
    return execute(manager, sql, [DeviceAuthorizationStatus.Denied, userId, DeviceAuthorizationStatus.Approved]);
  }

  /** The approving session ended: what it approved and the device has not yet redeemed will not be (in the caller's transaction). */
  async denyApprovedInSession(userId: string, sid: string, manager: EntityManager): Promise<number> {
    const sql = 'UPDATE "device_authorizations" SET "status" = ? WHERE "user_id" = ? AND "sid" = ? AND "status" = ?';
    return execute(manager, sql, [DeviceAuthorizationStatus.Denied, userId, sid, DeviceAuthorizationStatus.Approved]);
  }

  /** One bounded DELETE of requests that expired before `cutoff`, whatever became of them; walks the expires_at index. */
  purgeExpired(cutoff: Date, limit: number): Promise<number> {
    const skipLocked = this.dialect === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : '';
    const sql = `DELETE FROM "device_authorizations" WHERE "id" IN (SELECT "id" FROM "device_authorizations" WHERE "expires_at" < ? LIMIT ?${skipLocked})`;
    return this.transactions.write((manager) => execute(manager, sql, [this.date(cutoff), limit]));
  }
}
