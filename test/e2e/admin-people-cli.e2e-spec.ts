/**
 * Issue 48: the CLI's users:* commands and the admin API's people routes are one service
 * (AccountAdministration): the same operation leaves the same audit events, the CLI's by `cli`,
 * the API's by the administrator with their address; and the CLI keeps the last active owner too.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { AdminRolesService } from '../../src/admin/admin-roles.service.js';
import { PasskeyStore } from '../../src/factors/passkey.store.js';
import { UsersService } from '../../src/users/users.service.js';
import { AdminApi, signInThrough, tableSnapshot } from '../helpers/admin-api.js';
import { runCli } from '../helpers/cli.js';
import { TestApp, type RegisteredClient } from '../helpers/test-app.js';

const PASSWORD = 'correct horse battery staple';

describe('users:* and the admin API: one service', () => {
  let app: TestApp;
  let admin: AdminApi;
  let rp: RegisteredClient;

  beforeAll(async () => {
    app = await TestApp.start();
    admin = await AdminApi.setUp(app);
    rp = await app.createClient({ name: 'Notes', scope: 'openid notes:read' });
  }, 60_000);
  afterAll(() => app?.stop());

  const cli = async (...args: string[]): Promise<Record<string, unknown>> => {
    const result = await runCli(args, { input: `${PASSWORD} too\n` });
    expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr: '' });
    return JSON.parse(result.stdout) as Record<string, unknown>;
  };
  const addPasskey = async (userId: string): Promise<string> => {
    const id = randomUUID();
    await app.app.get(PasskeyStore).insert({ id, userId, credentialId: randomBytes(32).toString('base64url'), publicKey: randomBytes(77).toString('base64url'), counter: 0, transports: [], backupEligible: false, backedUp: false, name: 'Key', createdAt: new Date(), lastUsedAt: null });
    return id;
  };
  const signIn = async (username: string) => signInThrough(app, rp, { username, password: `${PASSWORD} too` }, 'openid notes:read');
  // What the administrators did: the person's own sign-in (user.signed_in, issue 48) is theirs, not the CLI's or the API's.
  const events = async (userId: string) =>
    ((await app.dataSource.query(`SELECT "actor", "action", "ip" FROM "audit_events" WHERE "subject" = 'user:${userId}' AND "action" <> 'user.signed_in' ORDER BY "id"`)) as { actor: string; action: string; ip: string | null }[]).map((e) => ({
      actor: e.actor,
      action: e.action,
      ip: e.ip ?? undefined,
    }));

  it('the same operation leaves the same audit events from the CLI and from the API', async () => {
    const owner = await admin.signIn(['owner']);
    const api = (method: string, path: string, body?: unknown) => admin.request(method, path, owner.token, body);

    // The CLI, on one person.
    const viaCli = `cli_${randomUUID().slice(0, 8)}`;
    const cliId = String((await cli('users:create', '--username', viaCli, '--password', PASSWORD)).id);
    await cli('users:update', '--username', viaCli, '--name', 'Cli Person');
    await cli('users:set-password', '--username', viaCli, '--password-stdin');
    await cli('users:passkey-remove', '--username', viaCli, '--passkey', await addPasskey(cliId));
    await addPasskey(cliId);
    await cli('users:mfa-reset', '--username', viaCli);
    await signIn(viaCli);
    expect(await cli('users:sign-out', '--username', viaCli)).toEqual({ username: viaCli, sessions_ended: 1 });
    await cli('users:deactivate', '--username', viaCli);
    await cli('users:reactivate', '--username', viaCli);
    await cli('users:delete', '--username', viaCli);

    // The API, on another.
    const created = await api('POST', '/people', { username: `api_${randomUUID().slice(0, 8)}`, password: PASSWORD });
    const apiId = String(created.body.id);
    const statuses = [created.status];
    statuses.push((await api('PATCH', `/people/${apiId}`, { name: 'Api Person' })).status);
    statuses.push((await api('PUT', `/people/${apiId}/password`, { password: `${PASSWORD} too` })).status);
    statuses.push((await api('DELETE', `/people/${apiId}/passkeys/${await addPasskey(apiId)}`)).status);
    await addPasskey(apiId);
    statuses.push((await api('DELETE', `/people/${apiId}/factors`)).status);
    await signIn(String(created.body.username));
    statuses.push((await api('DELETE', `/people/${apiId}/sessions`)).status);
    statuses.push((await api('PUT', `/people/${apiId}/lock`)).status);
    statuses.push((await api('DELETE', `/people/${apiId}/lock`)).status);
    statuses.push((await api('DELETE', `/people/${apiId}`)).status);
    expect(statuses).toEqual([201, 200, 204, 204, 200, 200, 200, 204, 204]);

    const fromCli = await events(cliId);
    const fromApi = await events(apiId);
    const actions = ['user.created', 'user.updated', 'user.password_set', 'passkey.removed', 'factor.removed', 'user.signed_out_everywhere', 'user.deactivated', 'user.reactivated', 'user.deleted'];
    expect(fromCli.map((e) => e.action)).toEqual(actions);
    expect(fromApi.map((e) => e.action)).toEqual(actions);
    expect(fromCli.every((e) => e.actor === 'cli' && e.ip === undefined)).toBe(true);
    expect(fromApi.every((e) => e.actor === `user:${owner.userId}` && e.ip === '127.0.0.1')).toBe(true);
  }, 180_000);

  it('the CLI never locks or deletes the last active owner either; nothing changes', async () => {
    const roles = app.app.get(AdminRolesService);
    for (const grant of await roles.list()) if (grant.role === 'owner') await roles.revoke(grant.userId, 'owner', 'cli', { allowNoOwner: true });
    const user = await app.createUser();
    await roles.grant((await app.app.get(UsersService).require(user.username)).id, 'owner', 'cli');
    const tables = ['users', 'sessions', 'tokens', 'admin_roles', 'audit_events'];
    const before = await tableSnapshot(app.dataSource, tables);
    for (const command of ['users:deactivate', 'users:delete']) {
      const result = await runCli([command, '--username', user.username]);
      expect([command, result.code, result.stdout, result.stderr.split('\n')[0]]).toEqual([command, 1, '', expect.stringContaining('is the last active owner')]);
    }
    expect(await tableSnapshot(app.dataSource, tables)).toBe(before);
  }, 120_000);
});
