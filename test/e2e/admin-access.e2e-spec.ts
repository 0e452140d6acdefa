/**
 * Issue 48: who may call the admin API, decided by AdminAccess alone. Roles bound what a person's
 * sign-in may carry; a role or registration withdrawn closes the API on the next request; admin
 * scopes on a client are an owner's to give; administrators are made and unmade by owners only.
 */
import { AdminRolesService } from '../../src/admin/admin-roles.service.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { AdminApi, ALL_ADMIN_SCOPES, tableSnapshot } from '../helpers/admin-api.js';
import { obtainTokens } from '../helpers/api-client.js';
import { tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp } from '../helpers/test-app.js';

const ROLE_TABLES = ['admin_roles', 'audit_events', 'users'];

describe('admin API access (AdminAccess)', () => {
  let app: TestApp;
  let admin: AdminApi;

  beforeAll(async () => {
    app = await TestApp.start();
    admin = await AdminApi.setUp(app);
  });

  afterAll(async () => {
    await app.stop();
  });

  describe('what a sign-in carries', () => {
    it('a person gets only the admin scopes their roles allow; with none, no admin scope at all', async () => {
      const helpdesk = await admin.signIn(['helpdesk']);
      expect(helpdesk.scope.split(' ').sort()).toEqual(['admin:people']);
      const nobody = await admin.signIn([]);
      expect(nobody.scope).toBe('');
      const both = await admin.signIn(['auditor', 'client-admin'], `${ALL_ADMIN_SCOPES} notes:read`);
      expect(both.scope.split(' ').sort()).toEqual(['admin:clients', 'admin:read', 'notes:read']);
    });

    it('a refresh carries an admin scope only while the person holds the role, and again once it is given back', async () => {
      const roles = app.app.get(AdminRolesService);
      const user = await app.createUser();
      const userId = (await app.app.get(UsersService).require(user.username)).id;
      await roles.grant(userId, 'auditor', 'cli');
      const tokens = await obtainTokens(app, admin.console, user, 'admin:read notes:read');
      expect(tokens.scope.split(' ').sort()).toEqual(['admin:read', 'notes:read']);
      const refresh = async (refreshToken: string) => {
        const result = await tokenRequest(app, admin.console, { grant_type: 'refresh_token', refresh_token: refreshToken });
        expect(result.status).toBe(200);
        return { scope: String(result.body.scope), refreshToken: String(result.body.refresh_token) };
      };
      await roles.revoke(userId, 'auditor', 'cli');
      const narrowed = await refresh(tokens.refreshToken!);
      expect(narrowed.scope).toBe('notes:read');
      await roles.grant(userId, 'auditor', 'cli');
      expect((await refresh(narrowed.refreshToken)).scope.split(' ').sort()).toEqual(['admin:read', 'notes:read']);
    });

    it('GET /me names the caller, their roles and the scopes they may use', async () => {
      const owner = await admin.signIn(['owner']);
      const me = await admin.request('GET', '/me', owner.token);
      expect(me.status).toBe(200);
      expect(me.headers.get('cache-control')).toBe('no-store');
      expect(me.body).toMatchObject({ actor: `user:${owner.userId}`, user: { id: owner.userId, username: owner.user.username }, roles: ['owner'], scopes: ['admin:owner'] });
    });
  });

  describe('refusals', () => {
    it('no token: 401 with a Bearer challenge', async () => {
      const response = await admin.request('GET', '/me');
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="latchkey"/);
    });

    it('a token without an admin scope (a person without a role, or a data-API token): 403 insufficient_scope', async () => {
      const nobody = await admin.signIn([]);
      const response = await admin.request('GET', '/me', nobody.token);
      expect(response.status).toBe(403);
      expect(response.body.error).toBe('insufficient_scope');
      const dataClient = await app.createClient();
      const user = await app.createUser();
      const data = await obtainTokens(app, dataClient, user, 'notes:read');
      expect((await admin.request('GET', '/me', data.accessToken)).status).toBe(403);
    });

    it('a help desk token cannot make anyone an administrator; nothing changes', async () => {
      const helpdesk = await admin.signIn(['helpdesk']);
      const target = await admin.signIn([]);
      const before = await tableSnapshot(app.dataSource, ROLE_TABLES);
      const response = await admin.request('PUT', `/people/${helpdesk.userId}/roles/owner`, helpdesk.token);
      expect(response.status).toBe(403);
      expect(response.body.error).toBe('insufficient_scope');
      expect((await admin.request('PUT', `/people/${target.userId}/roles/helpdesk`, helpdesk.token)).status).toBe(403);
      expect(await tableSnapshot(app.dataSource, ROLE_TABLES)).toBe(before);
    });

    it('an administrator whose role is removed loses access on the next request', async () => {
      const auditor = await admin.signIn(['auditor']);
      expect((await admin.request('GET', '/administrators', auditor.token)).status).toBe(200);
      await app.app.get(AdminRolesService).revoke(auditor.userId, 'auditor', 'cli');
      const response = await admin.request('GET', '/administrators', auditor.token);
      expect(response.status).toBe(403);
      expect(response.body.error_description).toMatch(/no longer holds an administrator role/);
    });

    it('a deactivated administrator loses access', async () => {
      const owner = await admin.signIn(['owner']);
      await app.dataSource.query(`UPDATE "users" SET "active" = ${app.dataSource.options.type === 'postgres' ? 'false' : '0'} WHERE "id" = '${owner.userId}'`);
      const response = await admin.request('GET', '/me', owner.token);
      expect([401, 403]).toContain(response.status);
    });

    it('a service client loses access when its registration no longer holds the scope', async () => {
      const { client, token } = await admin.serviceToken('admin:read');
      expect((await admin.request('GET', '/administrators', token)).status).toBe(200);
      const clients = app.app.get(ClientsService);
      const registered = (await clients.findById(client.clientId))!;
      await clients.update(registered, { name: registered.name, redirectUris: [], scope: 'notes:read', grantTypes: registered.grantTypes, isPublic: false }, { kind: 'administrator', actor: 'cli', owner: true });
      expect((await admin.request('GET', '/administrators', token)).status).toBe(403);
    });
  });

  describe('administrators, made by owners', () => {
    it('an owner grants and removes a role; each change is audited with who did it', async () => {
      const owner = await admin.signIn(['owner']);
      const target = await admin.signIn([]);
      const granted = await admin.request('PUT', `/people/${target.userId}/roles/helpdesk`, owner.token);
      expect(granted.status).toBe(201);
      expect(granted.body.roles).toEqual(['helpdesk']);
      expect((await admin.request('PUT', `/people/${target.userId}/roles/helpdesk`, owner.token)).status).toBe(200);
      const listed = await admin.request('GET', '/administrators', owner.token);
      expect(listed.body.items).toEqual(expect.arrayContaining([{ id: target.userId, username: target.user.username, name: null, roles: ['helpdesk'] }]));
      expect((await admin.request('DELETE', `/people/${target.userId}/roles/helpdesk`, owner.token)).status).toBe(204);
      expect(await app.app.get(AdminRolesService).rolesOf(target.userId)).toEqual([]);
      const events = (await app.dataSource.query(`SELECT "actor", "action", "subject" FROM "audit_events" WHERE "subject" = 'user:${target.userId}' AND "action" LIKE 'admin_role.%'`)) as { actor: string; action: string }[];
      expect(events.map((e) => [e.actor, e.action]).sort()).toEqual([[`user:${owner.userId}`, 'admin_role.granted'], [`user:${owner.userId}`, 'admin_role.revoked']]);
    });

    it('an unknown role or person is a 4xx with a clear error, never a 500', async () => {
      const owner = await admin.signIn(['owner']);
      const unknownRole = await admin.request('PUT', `/people/${owner.userId}/roles/superuser`, owner.token);
      expect(unknownRole.status).toBe(400);
      expect(unknownRole.body.error_description).toMatch(/auditor, helpdesk, client-admin, owner/);
      expect((await admin.request('PUT', '/people/not-a-uuid/roles/owner', owner.token)).status).toBe(404);
      expect((await admin.request('PUT', '/people/00000000-0000-4000-8000-000000000000/roles/owner', owner.token)).status).toBe(404);
    });

    it('nobody removes the last owner over HTTP (409); the database is unchanged', async () => {
      const roles = app.app.get(AdminRolesService);
      for (const grant of await roles.list()) if (grant.role === 'owner') await roles.revoke(grant.userId, 'owner', 'cli', { allowNoOwner: true });
      const last = await admin.signIn(['owner']);
      const before = await tableSnapshot(app.dataSource, ROLE_TABLES);
      const response = await admin.request('DELETE', `/people/${last.userId}/roles/owner`, last.token);
      expect(response.status).toBe(409);
      expect(await tableSnapshot(app.dataSource, ROLE_TABLES)).toBe(before);
    });
  });

  it('is described in the OpenAPI document the data API has, every admin route with its scopes', async () => {
    const document = (await (await fetch(app.url('/api/docs/json'))).json()) as { paths: Record<string, Record<string, { security?: { oauth2: string[] }[]; tags?: string[] } & { url?: string }>>; components: { securitySchemes: { oauth2: { flows: { authorizationCode: { scopes: Record<string, string> } } } } } };
    expect(Object.keys(document.components.securitySchemes.oauth2.flows.authorizationCode.scopes)).toEqual(expect.arrayContaining(['admin:read', 'admin:people', 'admin:clients', 'admin:owner']));
    expect(document.paths['/admin/api/v1/people/{id}/roles/{role}'].put.security).toEqual([{ oauth2: ['admin:owner'] }]);
    expect(document.paths['/admin/api/v1/me'].get.tags).toEqual(['admin']);
  });

  describe('admin scopes on clients', () => {
    it('only an owner gives a client an admin scope: a clients:register administrator cannot (RFC 7591 /register), nor manage a client holding one', async () => {
      const registrar = await admin.serviceToken('clients:register');
      const before = await tableSnapshot(app.dataSource, ['clients']);
      const register = await fetch(app.url('/register'), {
        method: 'POST',
        headers: { authorization: `Bearer ${registrar.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'Escalation', grant_types: ['client_credentials'], scope: 'admin:owner', redirect_uris: [] }),
      });
      expect(register.status).toBe(400);
      expect(((await register.json()) as { error: string }).error).toBe('invalid_client_metadata');
      expect(await tableSnapshot(app.dataSource, ['clients'])).toBe(before);
      const read = await fetch(app.url(`/register/${admin.console.clientId}`), { headers: { authorization: `Bearer ${registrar.token}` } });
      expect(read.status).toBe(403);
      const move = await fetch(app.url(`/register/${admin.console.clientId}`), {
        method: 'PUT',
        headers: { authorization: `Bearer ${registrar.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ client_id: admin.console.clientId, client_name: 'Console', redirect_uris: ['https://attacker.example/callback'] }),
      });
      expect(move.status).toBe(403);
      const remove = await fetch(app.url(`/register/${admin.console.clientId}`), { method: 'DELETE', headers: { authorization: `Bearer ${registrar.token}` } });
      expect(remove.status).toBe(403);
      expect(await tableSnapshot(app.dataSource, ['clients'])).toBe(before);
    });

    it('the implicit flow never carries an admin scope', async () => {
      const users = app.app.get(UsersService);
      expect(users).toBeDefined();
      const client = await app.createClient({ name: 'Implicit', scope: 'admin:read', grantTypes: ['implicit' as never], responseTypes: ['token'] as never });
      const response = await fetch(app.url(`/authorize?${new URLSearchParams({ client_id: client.clientId, response_type: 'token', redirect_uri: client.redirectUri, scope: 'admin:read', state: 's' })}`), { redirect: 'manual' });
      expect(response.status).toBe(302);
      expect(new URL(response.headers.get('location')!).hash).toMatch(/error=invalid_scope/);
    });
  });
});
