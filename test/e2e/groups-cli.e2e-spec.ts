/**
 * Issue 46 through the admin CLI, a process of its own on this file's database while the server
 * runs: groups:create|list|show|update|delete|add-members|remove-members and clients:groups. JSON
 * on stdout, one clear line on stderr, nothing changed by a refused command.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { ClientsService } from '../../src/clients/clients.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { runCli } from '../helpers/cli.js';
import { dropTestDatabase } from '../helpers/test-database.js';

const PASSWORD = 'correct horse battery staple';

async function cliJson<T = Record<string, unknown>>(...args: string[]): Promise<T> {
  const result = await runCli(args);
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(result.stdout) as T;
}

async function refused(...args: string[]): Promise<{ code: number | null; error: string }> {
  const result = await runCli(args);
  expect(result.stdout).toBe('');
  return { code: result.code, error: result.stderr.split('\n')[0] };
}

interface GroupJson {
  id: string;
  display_name: string;
  external_id: string | null;
  members?: { type: string; id: string; name: string | null }[];
}

describe('groups through the admin CLI (issue 46)', () => {
  let nest: NestFastifyApplication;
  let db: DataSource;
  let clientId: string;
  const ids: Record<string, string> = {};

  const count = async (table: string): Promise<number> => Number((await db.query(`SELECT COUNT(*) AS n FROM "${table}"`))[0].n);
  const snapshot = async () => ({ groups: await db.query(`SELECT * FROM "groups" ORDER BY "display_name"`), members: await db.query(`SELECT * FROM "group_members" ORDER BY "group_id", "member_id"`) });

  beforeAll(async () => {
    ({ nest } = await startAtIssuer());
    db = nest.get<DataSource>(getDataSourceToken());
    for (const username of ['alice', 'bob']) ids[username] = (await nest.get(UsersService).create(username, PASSWORD)).id;
    clientId = (await nest.get(ClientsService).create({ name: 'Wiki', redirectUris: ['http://127.0.0.1:9/cb'], scope: 'notes:read' })).client.id;
  }, 60_000);

  afterAll(async () => {
    await nest?.close();
    await dropTestDatabase();
  });

  it('creates, lists and shows groups, members by username and group name', async () => {
    const platform = await cliJson<GroupJson>('groups:create', '--name', 'Platform', '--user', 'bob');
    expect(platform).toMatchObject({ display_name: 'Platform', external_id: null, members: [{ type: 'user', id: ids.bob, name: 'bob' }] });
    const engineering = await cliJson<GroupJson>('groups:create', '--name', 'Engineering', '--external-id', 'ext-1', '--user', 'alice', '--member-group', 'Platform');
    expect(engineering.members).toEqual(expect.arrayContaining([{ type: 'user', id: ids.alice, name: 'alice' }, { type: 'group', id: platform.id, name: 'Platform' }]));
    expect((await cliJson<GroupJson[]>('groups:list')).map((g) => g.display_name)).toEqual(['Engineering', 'Platform']);
    expect(await cliJson<GroupJson>('groups:show', '--group', engineering.id)).toMatchObject({ display_name: 'Engineering', external_id: 'ext-1' });
    expect(await cliJson<GroupJson>('groups:show', '--group', 'Platform')).toMatchObject({ id: platform.id });
  });

  it('renames, adds and removes members; refuses unknown names, cycles and duplicates with one clear line and nothing changed', async () => {
    expect(await cliJson<GroupJson>('groups:update', '--group', 'Platform', '--name', 'Platform Team')).toMatchObject({ display_name: 'Platform Team' });
    expect((await cliJson<GroupJson>('groups:add-members', '--group', 'Platform Team', '--user', 'alice')).members!.map((m) => m.name).sort()).toEqual(['alice', 'bob']);
    expect((await cliJson<GroupJson>('groups:remove-members', '--group', 'Platform Team', '--user', 'bob')).members!.map((m) => m.name)).toEqual(['alice']);

    const before = await snapshot();
    expect(await refused('groups:add-members', '--group', 'Platform Team', '--member-group', 'Engineering')).toEqual({ code: 1, error: expect.stringMatching(/^latchkey: A group cannot hold itself/) });
    expect(await refused('groups:add-members', '--group', 'Platform Team', '--user', 'mallory')).toEqual({ code: 1, error: 'latchkey: No user named "mallory" (users:list shows them)' });
    expect(await refused('groups:create', '--name', 'Engineering')).toEqual({ code: 1, error: expect.stringMatching(/^latchkey: A group named "Engineering" exists already/) });
    expect(await refused('groups:show', '--group', 'Nope')).toEqual({ code: 1, error: 'latchkey: No group named or with id "Nope" (groups:list shows them)' });
    expect(await refused('groups:create')).toEqual({ code: 1, error: 'latchkey: --name is required' });
    expect(await snapshot()).toEqual(before);
  });

  it('clients:groups sets the claim and the required groups; an unknown group is refused with nothing changed; --no-require lifts the rule', async () => {
    const set = await cliJson<Record<string, unknown>>('clients:groups', '--client-id', clientId, '--claim', 'names', '--require', 'Engineering');
    expect(set).toMatchObject({ client_id: clientId, groups_claim: 'names', required_groups: [{ display_name: 'Engineering' }] });
    const stored = async () => {
      const client = await nest.get(ClientsService).findById(clientId);
      return { claim: client!.groupsClaim, required: client!.requiredGroups };
    };
    const before = await stored();
    const audited = await count('audit_events');
    expect(await refused('clients:groups', '--client-id', clientId, '--require', 'Engineering', '--require', 'Ghosts')).toEqual({ code: 1, error: 'latchkey: No group named or with id "Ghosts".' });
    expect(await refused('clients:groups', '--client-id', clientId, '--claim', 'everything')).toEqual({ code: 1, error: 'latchkey: The groups claim is one of none, names, ids, not "everything".' });
    expect(await stored()).toEqual(before);
    expect(await count('audit_events')).toBe(audited);

    expect(await cliJson('clients:groups', '--client-id', clientId, '--no-require', '--claim', 'ids')).toMatchObject({ groups_claim: 'ids', required_groups: [] });
    expect(await stored()).toEqual({ claim: 'ids', required: null });
    const events = await db.query(`SELECT "action" FROM "audit_events" WHERE "subject" = ? ORDER BY "id"`.replace('?', db.options.type === 'postgres' ? '$1' : '?'), [`client:${clientId}`]);
    expect(events.map((e: { action: string }) => e.action)).toEqual(['client.registered', 'client.updated', 'client.updated']);
  });

  it('deletes a group: its memberships go, in it and as a member of others', async () => {
    const platform = await cliJson<GroupJson>('groups:show', '--group', 'Platform Team');
    expect(await cliJson('groups:delete', '--group', 'Platform Team')).toMatchObject({ deleted: { id: platform.id } });
    expect((await cliJson<GroupJson>('groups:show', '--group', 'Engineering')).members!.map((m) => m.type)).toEqual(['user']);
    expect(Number((await db.query(`SELECT COUNT(*) AS n FROM "group_members" WHERE "group_id" = ${db.options.type === 'postgres' ? '$1' : '?'} OR "member_id" = ${db.options.type === 'postgres' ? '$2' : '?'}`, [platform.id, platform.id]))[0].n)).toBe(0);
    expect(await refused('groups:delete', '--group', 'Platform Team')).toEqual({ code: 1, error: 'latchkey: No group named or with id "Platform Team" (groups:list shows them)' });
  });
});
