/**
 * Issue 48: the admin API's system area: signing keys (read by the auditor, rotated by an owner),
 * doctor's checks, and groups, each through the service its CLI command calls, every change audited
 * with the caller and their address. Every changing route is refused without a token, to every
 * scope but the owner's, to a person without the role and to one whose role was removed, with the
 * tables unchanged.
 */
import { SigningKeyVault } from '../../src/signing/signing-key-vault.js';
import { GroupsService } from '../../src/groups/groups.service.js';
import { AdminApi } from '../helpers/admin-api.js';
import { adminCallers, allPages, expectDescribedAs, expectOwnerOnly, type AdminCallers } from '../helpers/admin-system-api.js';
import { runCli } from '../helpers/cli.js';
import { TestApp } from '../helpers/test-app.js';

type Row = Record<string, unknown>;

describe('admin API: signing keys, doctor, groups', () => {
  let app: TestApp;
  let admin: AdminApi;
  let callers: AdminCallers;

  /** The audit rows of a subject, oldest first: [actor, ip, action]. */
  const audited = async (subject: string): Promise<string[][]> =>
    ((await app.dataSource.query(`SELECT "actor", "ip", "action" FROM "audit_events" WHERE "subject" = '${subject}' ORDER BY "at", "id"`)) as Row[]).map((row) => [String(row.actor), String(row.ip), String(row.action)]);

  beforeAll(async () => {
    app = await TestApp.start();
    admin = await AdminApi.setUp(app);
    callers = await adminCallers(admin);
  });

  afterAll(async () => {
    await app.stop();
  });

  describe('doctor', () => {
    it("answers doctor's report to the auditor and the owner, with no password of a URL in it", async () => {
      for (const token of [callers.auditor, callers.owner]) {
        const response = await admin.request('GET', '/doctor', token);
        expect(response.status).toBe(200);
        const checks = response.body.checks as { id: string; status: string; detail: string }[];
        expect(checks.map((check) => check.id)).toEqual(expect.arrayContaining(['configuration', 'database', 'migrations', 'signing_keys', 'issuer']));
        expect(checks.find((check) => check.id === 'migrations')?.status).toBe('ok');
        for (const check of checks) expect(['ok', 'warn', 'fail', 'skip']).toContain(check.status);
        expect(response.body).toMatchObject({ ok: expect.any(Boolean), failures: expect.any(Number), warnings: expect.any(Number) });
        expect(JSON.stringify(response.body)).not.toMatch(/:\/\/[^\s/@"]*:[^\s/@"]+@/);
      }
    });

    it('is refused without a token, and to the help desk and the client administrator', async () => {
      expect((await admin.request('GET', '/doctor')).status).toBe(401);
      for (const token of [callers.helpdesk, callers.clientAdmin, callers.nobody, callers.demoted]) expect((await admin.request('GET', '/doctor', token)).status).toBe(403);
      await expectDescribedAs(admin, 'GET', '/doctor', 'system', 'read');
    });
  });

  describe('signing keys', () => {
    it('lists the keys as keys:list does, never a private half, paged', async () => {
      const { items, pages } = await allPages(admin, '/keys?limit=1', callers.auditor);
      const listed = await app.app.get(SigningKeyVault).list();
      expect(items.map((key) => key.kid).sort()).toEqual(listed.map((key) => key.kid).sort());
      expect(pages).toBe(listed.length);
      expect(Object.keys(items[0]).sort()).toEqual(['activates_at', 'alg', 'created_at', 'generation', 'kid', 'published_until', 'state']);
      expect((await admin.request('GET', '/keys', callers.helpdesk)).status).toBe(403);
      await expectDescribedAs(admin, 'GET', '/keys', 'system', 'read');
    });

    it('rotation is an owner\'s alone; refused, nothing changes', async () => {
      await expectOwnerOnly(admin, callers, 'POST', '/keys/rotation', { alg: 'ES256' });
      await expectDescribedAs(admin, 'POST', '/keys/rotation', 'system', 'write');
    });

    it('an owner rotates one algorithm, audited with who and from where', async () => {
      const response = await admin.request('POST', '/keys/rotation', callers.owner, { alg: 'ES256' });
      expect(response.status).toBe(201);
      const [key] = response.body.items as Row[];
      expect(response.body.items).toEqual([expect.objectContaining({ alg: 'ES256', generation: 2, state: 'next', published_until: null })]);
      expect(await audited(`signing_key:${String(key.kid)}`)).toEqual([[`user:${callers.ownerId}`, '127.0.0.1', 'signing_key.rotated']]);
    });

    it('an unknown algorithm or field is a 400, and nothing rotates', async () => {
      const before = (await app.app.get(SigningKeyVault).list()).length;
      for (const body of [{ alg: 'HS256' }, { algorithm: 'ES256' }]) {
        const response = await admin.request('POST', '/keys/rotation', callers.owner, body);
        expect([response.status, response.body.error]).toEqual([400, 'invalid_request']);
      }
      expect((await app.app.get(SigningKeyVault).list()).length).toBe(before);
    });

    it('without a body, every algorithm rotates', async () => {
      const response = await admin.request('POST', '/keys/rotation', callers.owner);
      expect(response.status).toBe(201);
      expect((response.body.items as Row[]).map((key) => key.alg).sort()).toEqual(['ES256', 'EdDSA', 'RS256']);
    });
  });

  describe('groups', () => {
    let person: string;
    let group: Row;

    beforeAll(async () => {
      person = (await admin.signIn([])).userId;
      const groups = app.app.get(GroupsService);
      for (const name of ['Zeta', 'Alpha', 'Mu']) await groups.create({ displayName: `List ${name}` }, 'cli');
    });

    it('an owner creates a group with members, shown with their names, audited with who and from where', async () => {
      const created = await admin.request('POST', '/groups', callers.owner, { display_name: 'Payroll', members: [{ type: 'user', id: person }] });
      expect(created.status).toBe(201);
      group = created.body;
      expect(group).toMatchObject({ display_name: 'Payroll', external_id: null, members: [{ type: 'user', id: person, name: expect.any(String) }] });
      expect((await admin.request('GET', `/groups/${String(group.id)}`, callers.auditor)).body).toEqual(group);
      expect(await audited(`group:${String(group.id)}`)).toEqual([[`user:${callers.ownerId}`, '127.0.0.1', 'group.created']]);
    });

    it('lists groups by name, paged, for the auditor', async () => {
      const { items } = await allPages(admin, '/groups?limit=2', callers.auditor);
      expect(items.map((g) => g.display_name).filter((name) => String(name).startsWith('List '))).toEqual(['List Alpha', 'List Mu', 'List Zeta']);
      expect(items.some((g) => g.id === group.id && !('members' in g))).toBe(true);
      for (const cursor of ['garbage', Buffer.from(JSON.stringify(['List Mu', 'not-a-uuid'])).toString('base64url')]) {
        expect((await admin.request('GET', `/groups?cursor=${cursor}`, callers.auditor)).status).toBe(400);
      }
    });

    it('renames, adds and removes members, and deletes, through GroupsService, each audited', async () => {
      const id = String(group.id);
      const other = await app.app.get(GroupsService).create({ displayName: 'Payroll Admins' }, 'cli');
      expect((await admin.request('PATCH', `/groups/${id}`, callers.owner, { display_name: 'Payroll Team', external_id: 'hr-1' })).body).toMatchObject({ display_name: 'Payroll Team', external_id: 'hr-1' });
      const added = await admin.request('POST', `/groups/${id}/members`, callers.owner, { members: [{ type: 'group', id: other.id }] });
      expect((added.body.members as Row[]).map((m) => [m.type, m.name])).toEqual([['group', 'Payroll Admins'], ['user', expect.any(String)]]);
      expect((await admin.request('DELETE', `/groups/${id}/members/user/${person}`, callers.owner)).status).toBe(204);
      expect(((await admin.request('GET', `/groups/${id}`, callers.owner)).body.members as Row[]).map((m) => m.type)).toEqual(['group']);
      expect((await admin.request('DELETE', `/groups/${id}`, callers.owner)).status).toBe(204);
      expect((await admin.request('GET', `/groups/${id}`, callers.owner)).status).toBe(404);
      expect((await audited(`group:${id}`)).map(([actor, ip, action]) => `${actor === `user:${callers.ownerId}` ? 'owner' : actor} ${ip} ${action}`)).toEqual([
        'owner 127.0.0.1 group.created',
        'owner 127.0.0.1 group.updated',
        'owner 127.0.0.1 group.members_changed',
        'owner 127.0.0.1 group.members_changed',
        'owner 127.0.0.1 group.deleted',
      ]);
    });

    it("refuses the service's broken rules as 4xx: a taken name, a cycle, an unknown member or field", async () => {
      const outer = await app.app.get(GroupsService).create({ displayName: 'Outer' }, 'cli');
      const inner = await app.app.get(GroupsService).create({ displayName: 'Inner', members: [{ type: 'group', id: outer.id }] }, 'cli');
      const cases: [string, string, unknown, number][] = [
        ['POST', '/groups', { display_name: 'Outer' }, 409],
        ['POST', '/groups', { displayName: 'camel' }, 400],
        ['POST', '/groups', { display_name: '' }, 400],
        ['PATCH', `/groups/${outer.id}`, { display_name: 'Inner' }, 409],
        ['POST', `/groups/${outer.id}/members`, { members: [{ type: 'group', id: inner.id }] }, 400],
        ['POST', `/groups/${outer.id}/members`, { members: [{ type: 'user', id: '00000000-0000-4000-8000-000000000000' }] }, 404],
        ['POST', `/groups/${outer.id}/members`, { members: [] }, 400],
        ['DELETE', `/groups/${outer.id}/members/robot/${inner.id}`, undefined, 400],
        ['PATCH', '/groups/not-a-group', { display_name: 'x' }, 404],
      ];
      for (const [method, path, body, status] of cases) {
        const response = await admin.request(method, path, callers.owner, body);
        expect({ method, path, status: response.status, error: typeof response.body.error }).toEqual({ method, path, status, error: 'string' });
      }
    });

    it("every changing route is an owner's alone; refused, nothing changes", async () => {
      const target = await app.app.get(GroupsService).create({ displayName: 'Guarded', members: [{ type: 'user', id: person }] }, 'cli');
      const routes: [string, string, unknown][] = [
        ['POST', '/groups', { display_name: 'Intruder' }],
        ['PATCH', `/groups/${target.id}`, { display_name: 'Renamed' }],
        ['DELETE', `/groups/${target.id}`, undefined],
        ['POST', `/groups/${target.id}/members`, { members: [{ type: 'user', id: callers.ownerId }] }],
        ['DELETE', `/groups/${target.id}/members/user/${person}`, undefined],
      ];
      for (const [method, path, body] of routes) await expectOwnerOnly(admin, callers, method, path, body);
      for (const [method, path] of [['GET', '/groups'], ['GET', '/groups/{id}'], ['POST', '/groups'], ['PATCH', '/groups/{id}'], ['DELETE', '/groups/{id}'], ['POST', '/groups/{id}/members'], ['DELETE', '/groups/{id}/members/{type}/{member}']]) {
        await expectDescribedAs(admin, method, path, 'system', method === 'GET' ? 'read' : 'write');
      }
    });

    it('the CLI and the API record the same event for the same change, each with its actor', async () => {
      const cli = await runCli(['groups:create', '--name', 'Made by CLI', '--external-id', 'x-1']);
      expect(cli.stderr).toBe('');
      const api = await admin.request('POST', '/groups', callers.owner, { display_name: 'Made by API', external_id: 'x-2' });
      const events = async (id: string) => (await app.dataSource.query(`SELECT "actor", "ip", "action", "details" FROM "audit_events" WHERE "subject" = 'group:${id}'`)) as Row[];
      const [byCli] = await events(String((JSON.parse(cli.stdout) as Row).id));
      const [byApi] = await events(String(api.body.id));
      expect([byCli.actor, byCli.ip, byCli.action]).toEqual(['cli', null, 'group.created']);
      expect([byApi.actor, byApi.ip, byApi.action]).toEqual([`user:${callers.ownerId}`, '127.0.0.1', 'group.created']);
      expect(Object.keys(JSON.parse(String(byApi.details)) as Row).sort()).toEqual(Object.keys(JSON.parse(String(byCli.details)) as Row).sort());
    });
  });
});
