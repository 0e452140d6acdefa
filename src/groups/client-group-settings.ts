import { Injectable } from '@nestjs/common';
import { CLI_ADMINISTRATOR, type ClientEditor } from '../clients/client-change-policy.js';
import { GroupsClaimSetting, type Client } from '../clients/client.entity.js';
import { ClientsService } from '../clients/clients.service.js';
import { DomainError } from '../common/domain-error.js';
import type { Group } from './group.entity.js';
import { GroupsService } from './groups.service.js';

/** What clients:groups prints and the admin API answers: the claim, and the required groups with their names (null for a group deleted since). */
export interface ClientGroupSettingsView {
  client_id: string;
  groups_claim: GroupsClaimSetting;
  required_groups: { id: string; display_name: string | null }[];
}

const CLAIM_SETTINGS: readonly string[] = Object.values(GroupsClaimSetting);

/**
 * A client's group settings (issue 46), for clients:groups and PUT /clients/{id}/groups alike:
 * the `groups` claim it receives, and the groups whose members alone may sign in to it. Groups are
 * named by id or by name, each found before anything changes. The change itself, with the
 * clients' rules (an owner's on a client holding an owner-only scope) and its audit event, is
 * ClientsService.setGroupSettings'.
 */
@Injectable()
export class ClientGroupSettings {
  constructor(
    private readonly clients: ClientsService,
    private readonly groups: GroupsService,
  ) {}

  async show(clientId: string): Promise<ClientGroupSettingsView> {
    return this.view(await this.client(clientId));
  }

  /** `groupsClaim` none, names or ids; `requiredGroups` null or empty: anyone may sign in. What is undefined stays as it is. */
  async set(clientId: string, settings: { groupsClaim?: string; requiredGroups?: readonly string[] | null }, editor: ClientEditor = CLI_ADMINISTRATOR): Promise<ClientGroupSettingsView> {
    const { groupsClaim, requiredGroups } = settings;
    if (groupsClaim !== undefined && !CLAIM_SETTINGS.includes(groupsClaim)) {
      throw new DomainError('invalid_client_metadata', `The groups claim is one of ${CLAIM_SETTINGS.join(', ')}, not ${JSON.stringify(groupsClaim.slice(0, 64))}.`);
    }
    if (groupsClaim === undefined && requiredGroups === undefined) throw new DomainError('invalid_client_metadata', 'Nothing to change: give the groups claim or the required groups.');
    await this.client(clientId);
    const ids = requiredGroups === undefined || requiredGroups === null ? requiredGroups : await Promise.all(requiredGroups.map(async (nameOrId) => (await this.find(nameOrId)).id));
    const client = await this.clients.setGroupSettings(clientId, { groupsClaim: groupsClaim as GroupsClaimSetting | undefined, requiredGroups: ids }, editor);
    return this.view(client);
  }

  private async client(clientId: string): Promise<Client> {
    const client = await this.clients.findById(clientId);
    if (!client) throw new DomainError('client_not_found', `No client with id ${JSON.stringify(clientId.slice(0, 64))}.`);
    return client;
  }

  private async find(nameOrId: string): Promise<Group> {
    const group = (await this.groups.findById(nameOrId)) ?? (await this.groups.findByName(nameOrId));
    if (!group) throw new DomainError('group_not_found', `No group named or with id ${JSON.stringify(nameOrId.slice(0, 256))}.`);
    return group;
  }

  private async view(client: Client): Promise<ClientGroupSettingsView> {
    const required = await Promise.all((client.requiredGroups ?? []).map(async (id) => ({ id, display_name: (await this.groups.findById(id))?.displayName ?? null })));
    return { client_id: client.id, groups_claim: client.groupsClaim, required_groups: required };
  }
}
