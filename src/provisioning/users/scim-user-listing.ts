import { Inject, Injectable } from '@nestjs/common';
import { scimConfig, type ScimConfig } from '../../config/scim.config.js';
import type { User } from '../../users/user.entity.js';
import { UsersService } from '../../users/users.service.js';
import type { Filter } from '../filter/filter.ast.js';
import type { Resource } from '../filter/resource-path.js';
import { listResponse, page, parseListQuery, type ListQuery } from '../resources/list-query.js';
import { USER_RESOURCE } from '../schema/resource-types.js';
import type { ScimUser } from './scim-user.entity.js';
import { UserResources } from './user-resources.js';

/**
 * GET /Users (RFC 7644 §3.4.2). `userName eq`, `externalId eq` and `id eq` (what Entra ID and Okta
 * send to match people) are indexed lookups; any other filter is evaluated over every person, which
 * suits directories of thousands, not millions.
 */
@Injectable()
export class ScimUserListing {
  constructor(
    private readonly users: UsersService,
    private readonly resources: UserResources,
    @Inject(scimConfig.KEY) private readonly config: ScimConfig,
  ) {}

  async list(parameters: Record<string, unknown>): Promise<Resource> {
    const query = parseListQuery(parameters, USER_RESOURCE, this.config.maxResults);
    const candidates = await this.candidates(query.filter);
    const extras = new Map((candidates.length === 1 ? await this.resources.extras.findByUserIds([candidates[0].id]) : await this.resources.extras.findAll()).map((row) => [row.userId, row]));
    const entries = await Promise.all(candidates.map(async (user) => ({ user, extra: extras.get(user.id) ?? null, resource: await this.resources.represent(user, extras.get(user.id) ?? null, query.readsMembership) })));
    const matching = entries.filter((entry) => query.predicate(entry.resource));
    if (query.sort) matching.sort((a, b) => query.sort!.compare(a.resource, b.resource));
    const selected = page(matching, query);
    const withGroups = query.projection.includes('groups');
    const resources = await Promise.all(selected.map(async (entry) => query.projection.apply(withGroups && !query.readsMembership ? await this.resources.represent(entry.user, entry.extra, true) : entry.resource)));
    return listResponse(matching.length, query.startIndex, resources);
  }

  /** The people a filter can match: one lookup for the equalities connectors send, else everyone. */
  private async candidates(filter: Filter | undefined): Promise<User[]> {
    if (filter?.kind === 'compare' && filter.op === 'eq' && typeof filter.value === 'string' && filter.path.sub === undefined) {
      const attribute = filter.path.attr.toLowerCase();
      if (attribute === 'username') return present(await this.users.findByUsernameIgnoringCase(filter.value));
      if (attribute === 'id') return present(this.resources.isUserId(filter.value) ? await this.users.findById(filter.value) : null);
      if (attribute === 'externalid') {
        const rows: ScimUser[] = await this.resources.extras.findByExternalId(filter.value);
        return (await Promise.all(rows.map((row) => this.users.findById(row.userId)))).filter((user): user is User => user !== null);
      }
    }
    return this.users.list();
  }
}

function present(user: User | null): User[] {
  return user ? [user] : [];
}

export type { ListQuery };
