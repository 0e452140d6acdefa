import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { escapeLike } from '../../database/keyset-page.js';
import { User } from '../../users/user.entity.js';
import type { AdminRole } from '../../scopes/admin-scopes.js';

/** What GET /admin/api/v1/people narrows the list to. */
export interface PeopleFilter {
  /** Part of the username, name or email address, in any case. */
  q?: string;
  active?: boolean;
  /** People holding this administrator role. */
  role?: AdminRole;
}

/**
 * The people list of the admin API (issue 48): keyset paging by username, which is unique, so a
 * page is one range read of its index however deep the list goes. A search reads LOWER() of three
 * columns with a leading wildcard, which no index serves: it scans the users, as any substring
 * search does; the page's LIMIT stops it early when matches are frequent.
 */
@Injectable()
export class PeopleSearchStore {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Up to `limit` people matching `filter`, by username, after `afterUsername`. */
  page(filter: PeopleFilter, limit: number, afterUsername: string | null): Promise<User[]> {
    const query = this.dataSource.manager.createQueryBuilder(User, 'person').orderBy('person.username', 'ASC').limit(limit);
    if (afterUsername !== null) query.andWhere('person.username > :afterUsername', { afterUsername });
    if (filter.q !== undefined) {
      // LIKE's wildcards in the search are literal characters (ESCAPE names the backslash for both dialects).
      const pattern = `%${escapeLike(filter.q.toLowerCase())}%`;
      query.andWhere("(LOWER(person.username) LIKE :pattern ESCAPE '\\' OR LOWER(person.name) LIKE :pattern ESCAPE '\\' OR LOWER(person.email) LIKE :pattern ESCAPE '\\')", { pattern });
    }
    if (filter.active !== undefined) query.andWhere(filter.active ? 'person.active IS TRUE' : 'person.active IS FALSE');
    if (filter.role !== undefined) {
      query.andWhere('EXISTS (SELECT 1 FROM "admin_roles" "held" WHERE "held"."user_id" = person.id AND "held"."role" = :role)', { role: filter.role });
    }
    return query.getMany();
  }
}
