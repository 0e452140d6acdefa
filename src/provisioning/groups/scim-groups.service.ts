import { Inject, Injectable } from '@nestjs/common';
import { appConfig, type AppConfig } from '../../config/app.config.js';
import type { Group } from '../../groups/group.entity.js';
import { GroupsService, type GroupMemberRef } from '../../groups/groups.service.js';
import { UsersService } from '../../users/users.service.js';
import type { Resource } from '../filter/resource-path.js';
import { assertIfMatch } from '../http/etag.js';
import { ScimError } from '../http/scim-error.js';
import { applyPatch } from '../patch/patch-applier.js';
import { parsePatchRequest } from '../patch/patch-request.js';
import { bodyAttributes } from '../resources/body-attributes.js';
import { GROUP_RESOURCE } from '../schema/resource-types.js';
import { groupInput, groupRepresentation, type GroupInput, type MemberValue } from './group-representation.js';

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Groups over SCIM (RFC 7644 §3.3, §3.5, §3.6), through GroupsService (which audits every change
 * with the client as actor). A PATCH is applied to the representation; the members it adds and
 * removes become addMembers and removeMembers, so concurrent changes to other members are kept.
 */
@Injectable()
export class ScimGroupsService {
  readonly baseUrl: string;

  constructor(
    private readonly groups: GroupsService,
    private readonly users: UsersService,
    @Inject(appConfig.KEY) app: AppConfig,
  ) {
    this.baseUrl = `${app.issuer.replace(/\/$/, '')}/scim/v2`;
  }

  async create(body: Resource, actor: string): Promise<Resource> {
    const input = groupInput(bodyAttributes(body, GROUP_RESOURCE));
    const group = await this.groups.create({ displayName: input.displayName, externalId: input.externalId, members: await this.refs(input.members) }, actor);
    return this.get(group.id);
  }

  async get(id: string): Promise<Resource> {
    return this.represent(await this.require(id), true);
  }

  async replace(id: string, body: Resource, ifMatch: string | undefined, actor: string): Promise<Resource> {
    const group = await this.require(id);
    assertIfMatch(ifMatch, await this.represent(group, true));
    const input = groupInput(bodyAttributes(body, GROUP_RESOURCE));
    await this.update(group, input, actor);
    await this.groups.setMembers(group.id, await this.refs(input.members), actor);
    return this.get(group.id);
  }

  async patch(id: string, body: Resource, ifMatch: string | undefined, actor: string): Promise<Resource> {
    const group = await this.require(id);
    const current = await this.represent(group, true);
    assertIfMatch(ifMatch, current);
    const operations = parsePatchRequest(body);
    const input = groupInput(bodyAttributes(applyPatch(current, operations, GROUP_RESOURCE), GROUP_RESOURCE));
    await this.update(group, input, actor);
    const before = new Set(((current.members ?? []) as { value: string }[]).map((member) => member.value));
    const after = new Set(input.members.map((member) => member.id));
    const added = input.members.filter((member) => !before.has(member.id));
    const removed = ((current.members ?? []) as { value: string; type: string }[]).filter((member) => !after.has(member.value));
    if (added.length > 0) await this.groups.addMembers(group.id, await this.refs(added), actor);
    if (removed.length > 0) await this.groups.removeMembers(group.id, removed.map((member) => ({ id: member.value, type: member.type === 'User' ? 'user' : 'group' })), actor);
    return this.get(group.id);
  }

  async delete(id: string, ifMatch: string | undefined, actor: string): Promise<void> {
    const group = await this.require(id);
    if (ifMatch !== undefined) assertIfMatch(ifMatch, await this.represent(group, true));
    await this.groups.delete(group.id, actor);
  }

  async represent(group: Group, withMembers: boolean): Promise<Resource> {
    return groupRepresentation(group, withMembers ? await this.groups.members(group.id) : undefined, this.baseUrl);
  }

  async require(id: string): Promise<Group> {
    const group = UUID_SHAPE.test(id) ? await this.groups.findById(id) : null;
    if (!group) throw ScimError.notFound(`No Group with id "${id}"`);
    return group;
  }

  private async update(group: Group, input: GroupInput, actor: string): Promise<void> {
    const changes = {
      ...(input.displayName === group.displayName ? {} : { displayName: input.displayName }),
      ...(input.externalId === group.externalId ? {} : { externalId: input.externalId }),
    };
    if (Object.keys(changes).length > 0) await this.groups.update(group.id, changes, actor);
  }

  /** Members as GroupsService names them; a value without a type is a person's id when one has it, else a group's. */
  private async refs(members: MemberValue[]): Promise<GroupMemberRef[]> {
    return Promise.all(
      members.map(async (member): Promise<GroupMemberRef> => {
        if (!UUID_SHAPE.test(member.id)) throw ScimError.badRequest('invalidValue', `Member "${member.id}" is not the id of a User or Group`);
        if (member.type) return { type: member.type, id: member.id };
        return { type: (await this.users.findById(member.id)) ? 'user' : 'group', id: member.id };
      }),
    );
  }
}
