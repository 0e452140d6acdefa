import type { INestApplicationContext } from '@nestjs/common';
import type { Group } from '../groups/group.entity.js';
import type { ClientGroupSettings } from '../groups/client-group-settings.js';
import { groupView } from '../groups/group-view.js';
import type { GroupMemberRef, GroupsService } from '../groups/groups.service.js';
import type { UsersService } from '../users/users.service.js';
import { required, UsageError, type Command, type Flags } from './command.js';

const groupsService = async (app: INestApplicationContext): Promise<GroupsService> => app.get((await import('../groups/groups.service.js')).GroupsService);
const usersService = async (app: INestApplicationContext): Promise<UsersService> => app.get((await import('../users/users.service.js')).UsersService);
const clientGroupSettings = async (app: INestApplicationContext): Promise<ClientGroupSettings> => app.get((await import('../groups/client-group-settings.js')).ClientGroupSettings);

/** A group named by its id or its name, as an administrator types it. */
async function findGroup(groups: GroupsService, nameOrId: string): Promise<Group> {
  const group = (await groups.findById(nameOrId)) ?? (await groups.findByName(nameOrId));
  if (!group) throw new UsageError(`No group named or with id "${nameOrId}" (groups:list shows them)`);
  return group;
}

function list(flags: Flags, name: string): string[] {
  return (flags[name] as string[] | undefined) ?? [];
}

/** --user USERNAME ... and --member-group NAME_OR_ID ... as member references; an unknown one is refused by name. */
async function membersFrom(app: INestApplicationContext, flags: Flags): Promise<GroupMemberRef[]> {
  const users = await usersService(app);
  const groups = await groupsService(app);
  const members: GroupMemberRef[] = [];
  for (const username of list(flags, 'user')) {
    const user = await users.findByUsername(username);
    if (!user) throw new UsageError(`No user named "${username}" (users:list shows them)`);
    members.push({ type: 'user', id: user.id });
  }
  for (const name of list(flags, 'member-group')) members.push({ type: 'group', id: (await findGroup(groups, name)).id });
  return members;
}

async function show(app: INestApplicationContext, group: Group): Promise<Record<string, unknown>> {
  const groups = await groupsService(app);
  return groupView((await groups.findById(group.id)) ?? group, await groups.namedMembers(group.id));
}

const MEMBER_OPTIONS = { group: { type: 'string' }, user: { type: 'string', multiple: true }, 'member-group': { type: 'string', multiple: true } } as const;

/** groups:add-members and groups:remove-members: the same flags, one call apart. */
function memberChange(change: 'add' | 'remove'): Command {
  return {
    usage: `groups:${change}-members --group NAME_OR_ID [--user USERNAME ...] [--member-group NAME_OR_ID ...]`,
    options: MEMBER_OPTIONS,
    async run(app, flags) {
      const groups = await groupsService(app);
      const group = await findGroup(groups, required(flags, 'group'));
      const members = await membersFrom(app, flags);
      if (members.length === 0) throw new UsageError('Name at least one --user or --member-group');
      await (change === 'add' ? groups.addMembers(group.id, members, 'cli') : groups.removeMembers(group.id, members, 'cli'));
      return show(app, group);
    },
  };
}

/** Issue 46: groups of people (and of groups), for the groups claim and the clients' group rule. */
export const GROUP_COMMANDS: Record<string, Command> = {
  'groups:create': {
    usage: 'groups:create --name NAME [--external-id ID] [--user USERNAME ...] [--member-group NAME_OR_ID ...]',
    options: { name: { type: 'string' }, 'external-id': { type: 'string' }, user: MEMBER_OPTIONS.user, 'member-group': MEMBER_OPTIONS['member-group'] },
    async run(app, flags) {
      const members = await membersFrom(app, flags);
      const group = await (await groupsService(app)).create({ displayName: required(flags, 'name'), externalId: (flags['external-id'] as string | undefined) ?? null, members }, 'cli');
      return show(app, group);
    },
  },
  'groups:list': {
    usage: 'groups:list',
    options: {},
    async run(app) {
      return (await (await groupsService(app)).list()).map((group) => groupView(group));
    },
  },
  'groups:show': {
    usage: 'groups:show --group NAME_OR_ID',
    options: { group: { type: 'string' } },
    async run(app, flags) {
      return show(app, await findGroup(await groupsService(app), required(flags, 'group')));
    },
  },
  'groups:update': {
    usage: 'groups:update --group NAME_OR_ID [--name NEW_NAME] [--external-id ID | --no-external-id]',
    options: { group: { type: 'string' }, name: { type: 'string' }, 'external-id': { type: 'string' }, 'no-external-id': { type: 'boolean' } },
    async run(app, flags) {
      if (flags['external-id'] !== undefined && flags['no-external-id']) throw new UsageError('--external-id and --no-external-id contradict each other');
      const groups = await groupsService(app);
      const group = await findGroup(groups, required(flags, 'group'));
      const changes = { displayName: flags.name as string | undefined, externalId: flags['no-external-id'] ? null : (flags['external-id'] as string | undefined) };
      if (changes.displayName === undefined && changes.externalId === undefined) throw new UsageError('Nothing to change: give --name, --external-id or --no-external-id');
      return show(app, await groups.update(group.id, changes, 'cli'));
    },
  },
  'groups:delete': {
    usage: 'groups:delete --group NAME_OR_ID',
    options: { group: { type: 'string' } },
    async run(app, flags) {
      const groups = await groupsService(app);
      const group = await findGroup(groups, required(flags, 'group'));
      await groups.delete(group.id, 'cli');
      return { deleted: groupView(group) };
    },
  },
  'groups:add-members': memberChange('add'),
  'groups:remove-members': memberChange('remove'),
  'clients:groups': {
    usage: 'clients:groups --client-id ID [--claim none|names|ids] [--require NAME_OR_ID ... | --no-require]',
    options: { 'client-id': { type: 'string' }, claim: { type: 'string' }, require: { type: 'string', multiple: true }, 'no-require': { type: 'boolean' } },
    // The groups claim the client receives, and the groups whose members alone may sign in to it: ClientGroupSettings checks and sets them, for the CLI and the admin API alike.
    async run(app, flags) {
      if (flags.require !== undefined && flags['no-require']) throw new UsageError('--require and --no-require contradict each other');
      const requiredGroups = flags['no-require'] ? null : flags.require === undefined ? undefined : list(flags, 'require');
      return (await clientGroupSettings(app)).set(required(flags, 'client-id'), { groupsClaim: flags.claim as string | undefined, requiredGroups });
    },
  },
};
