import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { IsNull, MoreThanOrEqual, type DataSource } from 'typeorm';
import { Client } from '../../clients/client.entity.js';
import { Session } from '../../sessions/session.entity.js';
import { User } from '../../users/user.entity.js';

/** The counts of the admin API's overview. */
export interface OverviewCounts {
  people: number;
  activePeople: number;
  clients: number;
  liveSessions: number;
}

/** How many people, clients and live sessions there are (GET /admin/api/v1/overview): one COUNT of each table. */
@Injectable()
export class OverviewStore {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async counts(now: Date): Promise<OverviewCounts> {
    const manager = this.dataSource.manager;
    const [people, activePeople, clients, liveSessions] = await Promise.all([
      manager.count(User),
      manager.countBy(User, { active: true }),
      manager.count(Client),
      manager.countBy(Session, { endedAt: IsNull(), expiresAt: MoreThanOrEqual(now) }),
    ]);
    return { people, activePeople, clients, liveSessions };
  }
}
