import { Injectable } from '@nestjs/common';
import { validate as isUuid } from 'uuid';
import { DomainError } from '../../common/domain-error.js';
import { FactorRecords } from '../../factors/factor-records.service.js';
import type { User } from '../../users/user.entity.js';
import { UsersService } from '../../users/users.service.js';
import type { AdminRole } from '../../scopes/admin-scopes.js';
import { AdminRolesService } from '../admin-roles.service.js';
import { PeopleSearchStore, type PeopleFilter } from './people-search.store.js';
import { personDetail } from './person-views.js';

/** The people the admin API reads (issue 48): found by id, listed and searched, described. */
@Injectable()
export class PeopleDirectory {
  constructor(
    private readonly users: UsersService,
    private readonly roles: AdminRolesService,
    private readonly factors: FactorRecords,
    private readonly search: PeopleSearchStore,
  ) {}

  /** The person with this id; anything else (an unknown id, not a UUID at all) is user_not_found. */
  async require(id: string): Promise<User> {
    const user = isUuid(id) ? await this.users.findById(id) : null;
    if (!user) throw new DomainError('user_not_found', `No person with id "${id}"`);
    return user;
  }

  /** Up to `limit` people matching the filter, by username after `afterUsername`, with their roles. */
  async list(filter: PeopleFilter, limit: number, afterUsername: string | null): Promise<{ user: User; roles: AdminRole[] }[]> {
    const people = await this.search.page(filter, limit, afterUsername);
    const roles = await this.roles.rolesOfMany(people.map((user) => user.id));
    return people.map((user) => ({ user, roles: roles.get(user.id) ?? [] }));
  }

  /** The person, their roles and their second factors' summary. */
  async describe(id: string): Promise<ReturnType<typeof personDetail>> {
    const user = await this.require(id);
    const [roles, factors] = await Promise.all([this.roles.rolesOf(user.id), this.factors.summary(user.id)]);
    return personDetail(this.users.toView(user), roles, factors);
  }
}
