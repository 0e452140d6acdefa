import { Inject, Injectable } from '@nestjs/common';
import { appConfig, type AppConfig } from '../../config/app.config.js';
import { GroupsService } from '../../groups/groups.service.js';
import type { User } from '../../users/user.entity.js';
import { UsersService } from '../../users/users.service.js';
import type { Resource } from '../filter/resource-path.js';
import { ScimError } from '../http/scim-error.js';
import type { ScimUser } from './scim-user.entity.js';
import { ScimUserStore } from './scim-user.store.js';
import { userRepresentation } from './user-representation.js';

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface LoadedUser {
  user: User;
  extra: ScimUser | null;
  representation: Resource;
}

/** People as SCIM User resources: loading them with what the directory said and the groups they are in. */
@Injectable()
export class UserResources {
  /** RFC 7644 §3.1 meta.location: the base of every resource's URI. */
  readonly baseUrl: string;

  constructor(
    private readonly users: UsersService,
    private readonly groups: GroupsService,
    readonly extras: ScimUserStore,
    @Inject(appConfig.KEY) app: AppConfig,
  ) {
    this.baseUrl = `${app.issuer.replace(/\/$/, '')}/scim/v2`;
  }

  async find(id: string): Promise<LoadedUser | null> {
    const user = UUID_SHAPE.test(id) ? await this.users.findById(id) : null;
    if (!user) return null;
    const extra = await this.extras.findByUserId(user.id);
    return { user, extra, representation: await this.represent(user, extra, true) };
  }

  async require(id: string): Promise<LoadedUser> {
    const found = await this.find(id);
    if (!found) throw ScimError.notFound(`No User with id "${id}"`);
    return found;
  }

  async represent(user: User, extra: ScimUser | null, withGroups: boolean): Promise<Resource> {
    const groups = withGroups ? await this.groups.directGroupsOf(user.id) : undefined;
    return userRepresentation(user, extra, groups, this.baseUrl);
  }

  isUserId(id: string): boolean {
    return UUID_SHAPE.test(id);
  }
}
