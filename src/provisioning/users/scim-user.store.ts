import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { In, type DataSource, type EntityManager } from 'typeorm';
import { ScimUser } from './scim-user.entity.js';

/** The scim_users table: read on its own, written in the caller's transaction with the person. */
@Injectable()
export class ScimUserStore {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  findByUserId(userId: string): Promise<ScimUser | null> {
    return this.dataSource.manager.findOneBy(ScimUser, { userId });
  }

  findByUserIds(userIds: readonly string[]): Promise<ScimUser[]> {
    return userIds.length === 0 ? Promise.resolve([]) : this.dataSource.manager.findBy(ScimUser, { userId: In([...userIds]) });
  }

  findAll(): Promise<ScimUser[]> {
    return this.dataSource.manager.find(ScimUser);
  }

  /** The people a directory knows by this externalId (RFC 7643 §3.1; case-exact). */
  findByExternalId(externalId: string): Promise<ScimUser[]> {
    return this.dataSource.manager.findBy(ScimUser, { externalId });
  }

  async save(row: ScimUser, manager: EntityManager): Promise<void> {
    await manager.save(ScimUser, row);
  }
}
