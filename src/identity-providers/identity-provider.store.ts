import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { MoreThan, type DataSource, type EntityManager } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import { dateParameter, execute } from '../database/prepared-statement.js';
import { IdentityProvider } from './identity-provider.entity.js';
import { UpstreamLink } from './upstream-link.entity.js';

/** The identity_providers and upstream_links tables. */
@Injectable()
export class IdentityProviderStore {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  find(id: string): Promise<IdentityProvider | null> {
    return this.dataSource.manager.findOneBy(IdentityProvider, { id });
  }

  list(): Promise<IdentityProvider[]> {
    return this.dataSource.manager.find(IdentityProvider, { order: { id: 'ASC' } });
  }

  /** One page by id (the primary key's range), after `afterId`. */
  page(limit: number, afterId: string | null): Promise<IdentityProvider[]> {
    return this.dataSource.manager.find(IdentityProvider, { where: afterId === null ? {} : { id: MoreThan(afterId) }, order: { id: 'ASC' }, take: limit });
  }

  async insert(row: IdentityProvider, manager: EntityManager): Promise<void> {
    await manager.insert(IdentityProvider, row as QueryDeepPartialEntity<IdentityProvider>);
  }

  async update(id: string, changes: Partial<Pick<IdentityProvider, 'displayName' | 'enabled' | 'settings'>>, manager: EntityManager): Promise<void> {
    await manager.update(IdentityProvider, { id }, changes as QueryDeepPartialEntity<IdentityProvider>);
  }

  /** Deletes the provider; its people's links go with it (ON DELETE CASCADE), the people stay. */
  async delete(id: string, manager: EntityManager): Promise<number> {
    return (await manager.delete(IdentityProvider, { id })).affected ?? 0;
  }

  findLink(idpId: string, subject: string): Promise<UpstreamLink | null> {
    return this.dataSource.manager.findOneBy(UpstreamLink, { idpId, subject });
  }

  linksOf(userId: string): Promise<UpstreamLink[]> {
    return this.dataSource.manager.find(UpstreamLink, { where: { userId }, order: { idpId: 'ASC', subject: 'ASC' } });
  }

  countLinks(idpId: string): Promise<number> {
    return this.dataSource.manager.countBy(UpstreamLink, { idpId });
  }

  /** A new link; false when that upstream identity is linked already (the primary key decides, on any instance). */
  async insertLink(link: Pick<UpstreamLink, 'idpId' | 'subject' | 'userId' | 'origin' | 'createdAt'>, manager: EntityManager): Promise<boolean> {
    // ON CONFLICT DO NOTHING: a taken identity is an expected outcome, not an error (a failed statement would poison a PostgreSQL transaction).
    const sql = 'INSERT INTO "upstream_links" ("idp_id", "subject", "user_id", "origin", "created_at") VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING';
    const dialect = this.dataSource.options.type;
    return (await execute(manager, sql, [link.idpId, link.subject, link.userId, link.origin, dateParameter(link.createdAt, dialect)])) === 1;
  }

  async deleteLink(idpId: string, subject: string, userId: string, manager: EntityManager): Promise<number> {
    return (await manager.delete(UpstreamLink, { idpId, subject, userId })).affected ?? 0;
  }

  async touchLink(idpId: string, subject: string, at: Date, manager: EntityManager): Promise<void> {
    await manager.update(UpstreamLink, { idpId, subject }, { lastSignInAt: at });
  }
}
