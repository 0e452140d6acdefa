/**
 * Issue 48: who may sign in to a client (clients:groups, clients:sign-in) and the purge, over the
 * admin API, through the services the CLI calls. Every change refused without a token, for a token
 * lacking the scope, for a person without the role and for one whose role was removed, with the
 * tables unchanged; a client administrator never touches a client holding an owner-only scope;
 * a required group really keeps others out at /authorize; the CLI and the API write the same events.
 */
import { randomBytes } from 'node:crypto';
import { GroupsService } from '../../src/groups/groups.service.js';
import { IdentityProvidersService } from '../../src/identity-providers/identity-providers.service.js';
import { SignInMethods } from '../../src/identity-providers/sign-in-methods.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { JtiUseStore } from '../../src/replay/jti-use.store.js';
import { UsersService } from '../../src/users/users.service.js';
import { AdminApi, tableSnapshot } from '../helpers/admin-api.js';
import { adminCallers, auditEventsOf, CLIENT_TABLES, demotedAdmin, rawAdminRequest, type AdminCallers } from '../helpers/admin-clients-api.js';
import { expectDescribedAs } from '../helpers/admin-system-api.js';
import { Browser } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { authorizeAsUser, authorizeUrl, newPkce, redirectParams } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';

/** What a purge deletes, and the audit log: equal before and after a refused purge. */
const PURGE_TABLES = ['jti_uses', 'tokens', 'authorization_codes', 'sessions', 'audit_events'];

describe('admin API: client group settings and sign-in rules, and the purge', () => {
  let app: TestApp;
  let admin: AdminApi;
  let callers: AdminCallers;
  /** A client administrator whose role was removed after they signed in. */
  let demoted: string;
  let target: RegisteredClient;
  let scimConnector: RegisteredClient;
  const people: Record<'alice' | 'bob', TestUser> = {} as never;

  const settingsChanges = (clientId: string): [string, string, unknown][] => [
    ['PUT', `/clients/${clientId}/groups`, { groups_claim: 'names', required_groups: ['Engineering'] }],
    ['PUT', `/clients/${clientId}/sign-in`, { identity_providers: ['contoso'], local_sign_in: false }],
  ];

  beforeAll(async () => {
    app = await TestApp.start({ PURGE_INTERVAL_SECONDS: '0' });
    admin = await AdminApi.setUp(app);
    callers = await adminCallers(admin);
    demoted = (await demotedAdmin(admin, 'client-admin')).token;
    target = await app.createClient({ name: 'Wiki', scope: 'openid notes:read' });
    scimConnector = await app.createClient({ name: 'Directory connector', scope: 'scim', grantTypes: ['client_credentials'] as never, redirectUris: [] });
    people.alice = await app.createUser();
    people.bob = await app.createUser();
    const alice = await app.app.get(UsersService).require(people.alice.username);
    await app.app.get(GroupsService).create({ displayName: 'Engineering', members: [{ type: 'user', id: alice.id }] }, 'cli');
    await app.app.get(IdentityProvidersService).create({ id: 'contoso', displayName: 'Contoso', protocol: 'oidc', settings: { issuer: 'http://127.0.0.1:9/contoso', clientId: 'latchkey' } }, 'cli');
  });

  afterAll(async () => {
    await app.stop();
  });

  /** Whether `user` gets a code for `client` at /authorize, in a browser of their own (the group rule answers 403 otherwise). */
  async function signsIn(client: RegisteredClient, user: TestUser): Promise<boolean> {
    const pkce = newPkce();
    const page = await authorizeAsUser(new Browser(app.baseUrl), user, authorizeUrl(client, { scope: 'openid notes:read', state: 's', nonce: 'n', code_challenge: pkce.challenge, code_challenge_method: 'S256' }));
    if (page.status === 403) return false;
    return redirectParams(page).get('code') !== null;
  }

  it('refuses every change without a token (401), for admin:read, admin:people, a person without a role and a demoted client administrator (403); nothing is written', async () => {
    const before = await tableSnapshot(app.dataSource, CLIENT_TABLES);
    for (const [method, path, body] of settingsChanges(target.clientId)) {
      const anonymous = await admin.request(method, path, undefined, body);
      expect([method, path, anonymous.status, anonymous.headers.get('www-authenticate')]).toEqual([method, path, 401, expect.stringMatching(/^Bearer/)]);
      for (const token of [callers.auditor.token, callers.helpdesk.token, callers.nobody.token, demoted]) {
        const refused = await admin.request(method, path, token, body);
        expect([method, path, refused.status, refused.body.error]).toEqual([method, path, 403, 'insufficient_scope']);
      }
      await expectDescribedAs(admin, method, path.replace(target.clientId, '{id}'), 'clients', 'write');
    }
    expect(await tableSnapshot(app.dataSource, CLIENT_TABLES)).toBe(before);
    for (const path of [`/clients/${target.clientId}/groups`, `/clients/${target.clientId}/sign-in`]) {
      expect((await admin.request('GET', path, callers.auditor.token)).status).toBe(200);
      expect((await admin.request('GET', path, callers.helpdesk.token)).status).toBe(403);
      expect((await admin.request('GET', path)).status).toBe(401);
      await expectDescribedAs(admin, 'GET', path.replace(target.clientId, '{id}'), 'clients', 'read');
    }
  });

  it('a client administrator cannot narrow or widen sign-in to a client holding an owner-only scope (403 admin_client_protected), nothing changes; an owner can', async () => {
    const before = await tableSnapshot(app.dataSource, CLIENT_TABLES);
    for (const { clientId } of [admin.console, scimConnector]) {
      for (const [method, path, body] of settingsChanges(clientId)) {
        const refused = await admin.request(method, path, callers.clientAdmin.token, body);
        expect([method, path, refused.status, refused.body.error]).toEqual([method, path, 403, 'admin_client_protected']);
      }
    }
    expect(await tableSnapshot(app.dataSource, CLIENT_TABLES)).toBe(before);
    const owner = await admin.request('PUT', `/clients/${scimConnector.clientId}/groups`, callers.owner.token, { groups_claim: 'ids', required_groups: null });
    expect([owner.status, owner.body]).toEqual([200, { client_id: scimConnector.clientId, groups_claim: 'ids', required_groups: [] }]);
  });

  it('a required group keeps everyone else out at /authorize; lifting it lets them in; GET /clients/{id} shows it', async () => {
    expect(await signsIn(target, people.bob)).toBe(true);
    const set = await admin.request('PUT', `/clients/${target.clientId}/groups`, callers.clientAdmin.token, { groups_claim: 'names', required_groups: ['Engineering'] });
    const engineering = (await app.app.get(GroupsService).findByName('Engineering'))!;
    expect([set.status, set.body]).toEqual([200, { client_id: target.clientId, groups_claim: 'names', required_groups: [{ id: engineering.id, display_name: 'Engineering' }] }]);
    expect((await admin.request('GET', `/clients/${target.clientId}/groups`, callers.auditor.token)).body).toEqual(set.body);
    expect((await admin.request('GET', `/clients/${target.clientId}`, callers.auditor.token)).body.groups).toEqual({ claim: 'names', required_groups: [engineering.id] });
    expect(await signsIn(target, people.bob)).toBe(false);
    expect(await signsIn(target, people.alice)).toBe(true);

    const lifted = await admin.request('PUT', `/clients/${target.clientId}/groups`, callers.clientAdmin.token, { groups_claim: 'none', required_groups: [] });
    expect([lifted.status, lifted.body.required_groups]).toEqual([200, []]);
    expect(await signsIn(target, people.bob)).toBe(true);
    const updates = (await auditEventsOf(app.dataSource, `client:${target.clientId}`)).filter(([, action]) => action === 'client.updated');
    expect(updates.map(([actor, , details, ip]) => [actor, ip, Object.keys(details.changes as object)])).toEqual(Array(2).fill([`user:${callers.clientAdmin.userId}`, '127.0.0.1', ['groups']]));
  });

  it('sets and shows the sign-in rule as clients:sign-in does; the authentication policy reads it', async () => {
    const client = await app.createClient({ name: 'Contoso only' });
    expect((await admin.request('GET', `/clients/${client.clientId}/sign-in`, callers.auditor.token)).body).toEqual({ client_id: client.clientId, identity_providers: 'any', local_sign_in: true });
    const set = await admin.request('PUT', `/clients/${client.clientId}/sign-in`, callers.clientAdmin.token, { identity_providers: ['contoso'], local_sign_in: false });
    expect([set.status, set.body]).toEqual([200, { client_id: client.clientId, identity_providers: ['contoso'], local_sign_in: false }]);
    const stored = (await app.app.get(ClientsService).findById(client.clientId))!;
    expect(app.app.get(SignInMethods).allows(stored, { local: true })).toBe(false);
    expect(app.app.get(SignInMethods).allows(stored, { idp: 'contoso' })).toBe(true);
    const opened = await admin.request('PUT', `/clients/${client.clientId}/sign-in`, callers.clientAdmin.token, { identity_providers: 'any', local_sign_in: true });
    expect([opened.status, opened.body]).toEqual([200, { client_id: client.clientId, identity_providers: 'any', local_sign_in: true }]);
    expect((await app.app.get(ClientsService).findById(client.clientId))!.signInRule).toBeNull();
  });

  it('malformed bodies are 400, unknown clients, groups and providers 404; nothing is written', async () => {
    const token = callers.owner.token;
    const groups = `/clients/${target.clientId}/groups`;
    const signIn = `/clients/${target.clientId}/sign-in`;
    const before = await tableSnapshot(app.dataSource, CLIENT_TABLES);
    for (const [path, body, status, error] of [
      [groups, '{"groups_claim": ', 400, 'invalid_request'],
      [groups, '[]', 400, 'invalid_request'],
      [groups, JSON.stringify({ groups_claim: 'names' }), 400, 'invalid_request'],
      [groups, JSON.stringify({ groups_claim: 'names', required_groups: null, colour: 'blue' }), 400, 'invalid_request'],
      [groups, JSON.stringify({ groups_claim: 'everything', required_groups: null }), 400, 'invalid_client_metadata'],
      [groups, JSON.stringify({ groups_claim: 3, required_groups: null }), 400, 'invalid_request'],
      [groups, JSON.stringify({ groups_claim: 'names', required_groups: 'Engineering' }), 400, 'invalid_request'],
      [groups, JSON.stringify({ groups_claim: 'names', required_groups: [''] }), 400, 'invalid_request'],
      [groups, JSON.stringify({ groups_claim: 'names', required_groups: ['Engineering', 'Ghosts'] }), 404, 'not_found'],
      [signIn, JSON.stringify({ identity_providers: ['contoso'] }), 400, 'invalid_request'],
      [signIn, JSON.stringify({ identity_providers: ['contoso'], local_sign_in: 'no' }), 400, 'invalid_request'],
      [signIn, JSON.stringify({ identity_providers: 'contoso', local_sign_in: false }), 400, 'invalid_request'],
      [signIn, JSON.stringify({ identity_providers: [], local_sign_in: false }), 400, 'invalid_request'],
      [signIn, JSON.stringify({ identity_providers: ['nope'], local_sign_in: true }), 404, 'not_found'],
      ['/clients/no-such-client/groups', JSON.stringify({ groups_claim: 'none', required_groups: null }), 404, 'not_found'],
      ['/clients/no-such-client/sign-in', JSON.stringify({ identity_providers: null, local_sign_in: true }), 404, 'not_found'],
    ] as const) {
      const answer = await rawAdminRequest(app, 'PUT', path, token, body);
      expect([path, body, answer.status, answer.body.error]).toEqual([path, body, status, error]);
    }
    expect((await rawAdminRequest(app, 'PUT', groups, token, 'groups_claim=names', 'application/x-www-form-urlencoded')).status).toBe(415);
    for (const path of ['/clients/no-such-client/groups', '/clients/no-such-client/sign-in']) expect((await admin.request('GET', path, token)).status).toBe(404);
    expect(await tableSnapshot(app.dataSource, CLIENT_TABLES)).toBe(before);
  });

  it('the CLI and the API write the same audit events for the same changes', async () => {
    const actions = async (subject: string) => (await auditEventsOf(app.dataSource, subject)).map(([, action, details]) => [action, Object.keys((details.changes as object | undefined) ?? {})]);
    const [byCli, byApi] = [await app.createClient({ name: 'By CLI' }), await app.createClient({ name: 'By API' })];
    for (const args of [
      ['clients:groups', '--client-id', byCli.clientId, '--claim', 'names', '--require', 'Engineering'],
      ['clients:sign-in', '--client-id', byCli.clientId, '--idp', 'contoso', '--no-local'],
    ]) {
      const result = await runCli(args);
      expect([args[0], result.code, result.stderr]).toEqual([args[0], 0, '']);
    }
    await admin.request('PUT', `/clients/${byApi.clientId}/groups`, callers.clientAdmin.token, { groups_claim: 'names', required_groups: ['Engineering'] });
    await admin.request('PUT', `/clients/${byApi.clientId}/sign-in`, callers.clientAdmin.token, { identity_providers: ['contoso'], local_sign_in: false });
    expect(await actions(`client:${byApi.clientId}`)).toEqual(await actions(`client:${byCli.clientId}`));
    expect(await actions(`client:${byApi.clientId}`)).toEqual([['client.registered', []], ['client.updated', ['groups']], ['client.updated', ['sign_in']]]);
  }, 60_000);

  describe('the purge', () => {
    /** Single-use JWT records past their expiry: rows a purge deletes. */
    async function expiredRows(count: number): Promise<void> {
      for (let i = 0; i < count; i++) await app.app.get(JtiUseStore).use('dpop_proof', 'test', randomBytes(8).toString('hex'), new Date(Date.now() - 2 * 86_400_000));
    }

    it("is an owner's alone: refused without a token, to every other role, a person without one and a demoted owner; nothing is deleted", async () => {
      await expiredRows(2);
      const demotedOwner = (await demotedAdmin(admin, 'owner')).token;
      const before = await tableSnapshot(app.dataSource, PURGE_TABLES);
      const answers: [string, number, unknown][] = [];
      for (const [who, token] of [['no token', undefined], ['auditor', callers.auditor.token], ['helpdesk', callers.helpdesk.token], ['client-admin', callers.clientAdmin.token], ['no role', callers.nobody.token], ['demoted owner', demotedOwner]] as const) {
        const response = await admin.request('POST', '/housekeeping/purge', token);
        answers.push([who, response.status, response.body.error]);
      }
      expect(answers).toEqual([['no token', 401, 'unauthorized'], ...['auditor', 'helpdesk', 'client-admin', 'no role', 'demoted owner'].map((who) => [who, 403, 'insufficient_scope'])]);
      expect(await tableSnapshot(app.dataSource, PURGE_TABLES)).toBe(before);
      await expectDescribedAs(admin, 'POST', '/housekeeping/purge', 'system', 'write');
    });

    it("an owner's purge deletes what the CLI's would and answers its counts, audited with who and from where", async () => {
      await expiredRows(3);
      const refused = await admin.request('POST', '/housekeeping/purge', callers.owner.token, { dry_run: true });
      expect([refused.status, refused.body.error]).toEqual([400, 'invalid_request']);
      const purged = await admin.request('POST', '/housekeeping/purge', callers.owner.token);
      expect(purged.status).toBe(200);
      expect(Object.keys(purged.body).sort()).toEqual(['codes', 'device_authorizations', 'email_links', 'idempotency_keys', 'instances', 'jti_uses', 'logout_deliveries', 'mac_nonces', 'pushed_requests', 'sessions', 'tokens']);
      expect(purged.body.jti_uses).toBeGreaterThanOrEqual(3);
      expect(await app.dataSource.query('SELECT * FROM "jti_uses"')).toEqual([]);
      const [event] = await auditEventsOf(app.dataSource, 'housekeeping:purge');
      expect(event).toEqual([`user:${callers.owner.userId}`, 'housekeeping.purged', purged.body, '127.0.0.1']);
      // The CLI's purge (cron's) deletes the same rows and leaves no event.
      await expiredRows(1);
      const cli = await runCli(['purge']);
      expect([cli.code, (JSON.parse(cli.stdout) as Record<string, number>).jtiUses]).toEqual([0, 1]);
      expect(await auditEventsOf(app.dataSource, 'housekeeping:purge')).toHaveLength(1);
    }, 60_000);
  });
});
