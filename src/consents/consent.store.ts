import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { Consent } from './consent.entity.js';

/** The consents table: one row per person and client, holding the union of what the person allowed. */
@Injectable()
export class ConsentStore {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  find(userId: string, clientId: string): Promise<Consent | null> {
    return this.dataSource.manager.findOneBy(Consent, { userId, clientId });
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
