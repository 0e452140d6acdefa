import { Inject, Injectable } from '@nestjs/common';
import { scimConfig, type ScimConfig } from '../../config/scim.config.js';
import type { Group } from '../../groups/group.entity.js';
import { GroupsService } from '../../groups/groups.service.js';
import type { Filter } from '../filter/filter.ast.js';
import type { Resource } from '../filter/resource-path.js';
import { listResponse, page, parseListQuery } from '../resources/list-query.js';
import { GROUP_RESOURCE } from '../schema/resource-types.js';
import { ScimGroupsService } from './scim-groups.service.js';

/** GET /Groups (RFC 7644 §3.4.2): `displayName eq` and `id eq` are lookups; other filters are evaluated over every group. */
@Injectable()
export class ScimGroupListing {
  constructor(
    private readonly groups: GroupsService,
    private readonly resources: ScimGroupsService,
    @Inject(scimConfig.KEY) private readonly config: ScimConfig,
  ) {}

  async list(parameters: Record<string, unknown>): Promise<Resource> {
    const query = parseListQuery(parameters, GROUP_RESOURCE, this.config.maxResults);
    const candidates = await this.candidates(query.filter);
    // Members are loaded for every group only when the filter or sort reads them; else for the page.
    const entries = await Promise.all(candidates.map(async (group) => ({ group, resource: await this.resources.represent(group, query.readsMembership) })));
    const matching = entries.filter((entry) => query.predicate(entry.resource));
    if (query.sort) matching.sort((a, b) => query.sort!.compare(a.resource, b.resource));
    const withMembers = query.projection.includes('members');
    const resources = await Promise.all(page(matching, query).map(async (entry) => query.projection.apply(withMembers && !query.readsMembership ? await this.resources.represent(entry.group, true) : entry.resource)));
    return listResponse(matching.length, query.startIndex, resources);
  }

  private async candidates(filter: Filter | undefined): Promise<Group[]> {
    if (filter?.kind === 'compare' && filter.op === 'eq' && typeof filter.value === 'string' && filter.path.sub === undefined && filter.path.schema === undefined) {
      const attribute = filter.path.attr.toLowerCase();
      if (attribute === 'displayname') {
        const found = await this.groups.findByName(filter.value);
        // displayName compares without regard to case (RFC 7643 §4.2): a miss by exact name falls back to the listing.
        if (found) return [found];
      }
      if (attribute === 'id') return /^[0-9a-f-]{36}$/i.test(filter.value) ? [await this.groups.findById(filter.value)].filter((group): group is Group => group !== null) : [];
    }
    return this.groups.list();
  }
}
