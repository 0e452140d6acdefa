import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { EntityRows } from '../database/entity-rows.js';
import { PreparedStatement } from '../database/prepared-statement.js';
import { Consent } from './consent.entity.js';

/** The consents table: one row per person and client, holding the union of what the person allowed. */
@Injectable()
export class ConsentStore {
  private readonly rows: EntityRows<Consent>;
  // Prepared: every authorization request in a signed-in session asks whether consent was given.
  private readonly byUserAndClient: PreparedStatement<Record<string, unknown>>;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.rows = new EntityRows(dataSource.getMetadata(Consent));
    this.byUserAndClient = new PreparedStatement(dataSource, 'latchkey_consent', `SELECT ${this.rows.selectList} FROM ${this.rows.table} WHERE "user_id" = ? AND "client_id" = ?`);
  }

  async find(userId: string, clientId: string): Promise<Consent | null> {
    const row = await this.byUserAndClient.one(userId, clientId);
    return row ? this.rows.decode(row) : null;
  }

  listOf(userId: string): Promise<Consent[]> {
    return this.dataSource.manager.find(Consent, { where: { userId }, order: { createdAt: 'ASC' } });
  }

  /** An upsert on the (user, client) unique index: two instances granting at once cannot create two rows. */
  async upsert(consent: Pick<Consent, 'id' | 'userId' | 'clientId' | 'scope'>, manager: EntityManager): Promise<void> {
    await manager.upsert(Consent, consent, { conflictPaths: ['userId', 'clientId'] });
  }

  /** Deletes the person's consent for the client, in the caller's transaction; false when there was none. */
  async delete(userId: string, clientId: string, manager: EntityManager): Promise<boolean> {
    return ((await manager.delete(Consent, { userId, clientId })).affected ?? 0) > 0;
  }
}
