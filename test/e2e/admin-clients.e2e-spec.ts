/**
 * Issue 48: clients over the admin API (/admin/api/v1/clients), through the CLI's ClientsService.
 * Every change refused without a token, for a token lacking admin:clients and for a person without
 * a role, with nothing written; a client administrator never touches a client holding an
 * owner-only scope; a secret is shown once; the audit events are the CLI's.
 */
import { ClientsService } from '../../src/clients/clients.service.js';
import { AdminApi, tableSnapshot } from '../helpers/admin-api.js';
import { adminCallers, auditEventsOf, CLIENT_TABLES, personWithGrant, rawAdminRequest, registeredResourceServer, serviceClientMetadata, type AdminCallers } from '../helpers/admin-clients-api.js';
import { runCli } from '../helpers/cli.js';
import { clientCredentialsStatus } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient } from '../helpers/test-app.js';

/** A secret's or its hash's member (client_secret_basic, the method's name, is no secret). */
const SECRET_FIELD = /"client_secret"|"client_secret_expires_at"|secret_?hash/i;

describe('admin API: clients', () => {
  let app: TestApp;
  let admin: AdminApi;
  let callers: AdminCallers;
  let target: RegisteredClient;
  let grantee: string;
  let resourceServer: string;

  beforeAll(async () => {
    app = await TestApp.start();
    admin = await AdminApi.setUp(app);
    callers = await adminCallers(admin);
    target = await app.createClient({ name: 'Target' });
    grantee = (await personWithGrant(app, target)).userId;
    resourceServer = await registeredResourceServer(app, 'Refusals');
  });

  afterAll(async () => {
    await app.stop();
  });

  const changes = (): [string, string, unknown][] => [
    ['POST', '/clients', serviceClientMetadata('Refused')],
    ['PATCH', `/clients/${target.clientId}`, { client_name: 'Renamed' }],
    ['POST', `/clients/${target.clientId}/secret`, undefined],
    ['DELETE', `/clients/${target.clientId}`, undefined],
    ['DELETE', `/clients/${target.clientId}/grants/${grantee}`, undefined],
    ['POST', '/resource-servers', { uri: 'https://refused.example.com/api' }],
    ['DELETE', `/resource-servers/${resourceServer}`, undefined],
  ];

  it('refuses every change without a token (401), for admin:read, admin:people and a person without a role (403); nothing is written', async () => {
    const before = await tableSnapshot(app.dataSource, CLIENT_TABLES);
    for (const [method, path, body] of changes()) {
      const anonymous = await admin.request(method, path, undefined, body);
      expect([method, path, anonymous.status, anonymous.headers.get('www-authenticate')]).toEqual([method, path, 401, expect.stringMatching(/^Bearer/)]);
      for (const caller of [callers.auditor, callers.helpdesk, callers.nobody]) {
        const refused = await admin.request(method, path, caller.token, body);
        expect([method, path, refused.status, refused.body.error]).toEqual([method, path, 403, 'insufficient_scope']);
      }
    }
    expect(await tableSnapshot(app.dataSource, CLIENT_TABLES)).toBe(before);
  });

  it('a client administrator cannot change, rotate, delete or withdraw from a client holding an owner-only scope (403 admin_client_protected), nor give one (400); an owner can', async () => {
    const protectedClients = [admin.console, await app.createClient({ name: 'Directory connector', scope: 'scim', grantTypes: ['client_credentials'] as never, redirectUris: [] })];
    const consoleGrantee = (await personWithGrant(app, admin.console, 'notes:read')).userId;
    const before = await tableSnapshot(app.dataSource, CLIENT_TABLES);
    for (const { clientId } of protectedClients) {
      for (const [method, path, body] of [
        ['PATCH', `/clients/${clientId}`, { redirect_uris: ['https://attacker.example/callback'] }],
        ['POST', `/clients/${clientId}/secret`, undefined],
        ['DELETE', `/clients/${clientId}`, undefined],
        ['DELETE', `/clients/${clientId}/grants/${consoleGrantee}`, undefined],
      ] as const) {
        const refused = await admin.request(method, path, callers.clientAdmin.token, body);
        expect([method, path, refused.status, refused.body.error]).toEqual([method, path, 403, 'admin_client_protected']);
      }
    }
    for (const scope of ['admin:read', 'scim', 'notes:read admin:owner']) {
      const escalation = await admin.request('POST', '/clients', callers.clientAdmin.token, serviceClientMetadata('Escalation', scope));
      expect([scope, escalation.status, escalation.body.error]).toEqual([scope, 400, 'invalid_client_metadata']);
    }
    const widen = await admin.request('PATCH', `/clients/${target.clientId}`, callers.clientAdmin.token, { scope: 'notes:read admin:read' });
    expect(widen.status).toBe(400);
    expect(await tableSnapshot(app.dataSource, CLIENT_TABLES)).toBe(before);
    // The client administrator may still read it; an owner changes it.
    expect((await admin.request('GET', `/clients/${admin.console.clientId}`, callers.clientAdmin.token)).status).toBe(200);
    const renamed = await admin.request('PATCH', `/clients/${protectedClients[1].clientId}`, callers.owner.token, { client_name: 'Directory (owner)' });
    expect([renamed.status, renamed.body.client_name]).toEqual([200, 'Directory (owner)']);
    const given = await admin.request('POST', '/clients', callers.owner.token, serviceClientMetadata('Auditor robot', 'admin:read'));
    expect([given.status, given.body.scope]).toEqual([201, 'admin:read']);
  });

  it('create answers 201 with the secret once; GET and the list never show a secret or its hash', async () => {
    const created = await admin.request('POST', '/clients', callers.clientAdmin.token, { ...serviceClientMetadata('Reports robot'), client_uri: 'https://reports.example.com' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ client_name: 'Reports robot', grant_types: ['client_credentials'], token_endpoint_auth_method: 'client_secret_basic', client_secret: expect.stringMatching(/.{20,}/) });
    const id = String(created.body.client_id);
    expect(created.headers.get('location')).toBe(`/admin/api/v1/clients/${id}`);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const secret = String(created.body.client_secret);
    const read = await admin.request('GET', `/clients/${id}`, callers.auditor.token);
    const listed = await admin.request('GET', `/clients?q=${encodeURIComponent(id)}`, callers.auditor.token);
    for (const answer of [read, listed]) {
      const text = JSON.stringify(answer.body);
      expect([answer.status, text.includes(secret), SECRET_FIELD.test(text)]).toEqual([200, false, false]);
    }
    expect(read.body).toEqual({ ...created.body, client_secret: undefined, client_secret_expires_at: undefined });
    expect((listed.body.items as unknown[]).length).toBe(1);
    expect(await clientCredentialsStatus(app.baseUrl, { clientId: id, clientSecret: secret, redirectUri: '' })).toBe(200);
  });

  it('rotation shows the new secret once; the old one is refused at /token at once and the new one works', async () => {
    const created = await admin.request('POST', '/clients', callers.clientAdmin.token, serviceClientMetadata('Rotated robot'));
    const id = String(created.body.client_id);
    const old = { clientId: id, clientSecret: String(created.body.client_secret), redirectUri: '' };
    expect(await clientCredentialsStatus(app.baseUrl, old)).toBe(200);
    const rotated = await admin.request('POST', `/clients/${id}/secret`, callers.clientAdmin.token);
    expect([rotated.status, rotated.headers.get('cache-control')]).toEqual([200, 'no-store']);
    const fresh = { ...old, clientSecret: String(rotated.body.client_secret) };
    expect(fresh.clientSecret).not.toBe(old.clientSecret);
    expect(await clientCredentialsStatus(app.baseUrl, old)).toBe(401);
    expect(await clientCredentialsStatus(app.baseUrl, fresh)).toBe(200);
    expect(JSON.stringify((await admin.request('GET', `/clients/${id}`, callers.owner.token)).body)).not.toMatch(SECRET_FIELD);
    const spa = await admin.request('POST', '/clients', callers.owner.token, { client_name: 'SPA', redirect_uris: ['https://spa.example.com/cb'], token_endpoint_auth_method: 'none' });
    const refused = await admin.request('POST', `/clients/${String(spa.body.client_id)}/secret`, callers.owner.token);
    expect([refused.status, refused.body.error]).toEqual([400, 'invalid_request']);
  });

  it('PATCH changes what it names and keeps the rest; null removes; audited with the fields, the actor and the address', async () => {
    const created = await admin.request('POST', '/clients', callers.clientAdmin.token, { client_name: 'Web app', redirect_uris: ['https://web.example.com/cb'], scope: 'notes:read', logo_uri: 'https://web.example.com/logo.png' });
    const id = String(created.body.client_id);
    const patched = await admin.request('PATCH', `/clients/${id}`, callers.clientAdmin.token, { client_name: 'Web app 2', logo_uri: null, redirect_uris: ['https://web.example.com/cb', 'https://web.example.com/cb2'] });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({ ...created.body, client_secret: undefined, client_secret_expires_at: undefined, client_name: 'Web app 2', logo_uri: undefined, redirect_uris: ['https://web.example.com/cb', 'https://web.example.com/cb2'] });
    const events = await auditEventsOf(app.dataSource, `client:${id}`);
    expect(events.map(([actor, action]) => [actor, action])).toEqual([[`user:${callers.clientAdmin.userId}`, 'client.registered'], [`user:${callers.clientAdmin.userId}`, 'client.updated']]);
    expect(events[1][3]).toBe('127.0.0.1');
    expect(events[1][2]).toEqual({ changes: { client_name: { old: 'Web app', new: 'Web app 2' }, logo_uri: { old: 'https://web.example.com/logo.png' }, redirect_uris: { old: ['https://web.example.com/cb'], new: ['https://web.example.com/cb', 'https://web.example.com/cb2'] } } });
  });

  it('malformed bodies are 400 with an error, unknown ids 404; nothing is written', async () => {
    const token = callers.owner.token;
    const before = await tableSnapshot(app.dataSource, CLIENT_TABLES);
    for (const [method, path, body, status] of [
      ['POST', '/clients', '{"client_name": ', 400],
      ['POST', '/clients', '[1, 2]', 400],
      ['POST', '/clients', JSON.stringify({ client_name: 7 }), 400],
      ['POST', '/clients', JSON.stringify({ client_name: 'x', colour: 'blue' }), 400],
      ['POST', '/clients', JSON.stringify({ ...serviceClientMetadata('Chosen'), client_secret: 'mine' }), 400],
      ['POST', '/clients', JSON.stringify({ client_name: 'x', redirect_uris: ['not a uri'] }), 400],
      ['POST', '/clients', JSON.stringify({ client_name: 'x', grant_types: ['magic'] }), 400],
      ['PATCH', `/clients/${target.clientId}`, JSON.stringify({ client_id: 'another' }), 400],
      ['PATCH', `/clients/${target.clientId}`, JSON.stringify({ sign_in: {} }), 400],
      ['PATCH', `/clients/${target.clientId}`, JSON.stringify({ token_endpoint_auth_method: 'none' }), 400],
      ['POST', '/resource-servers', JSON.stringify({ uri: 42 }), 400],
      ['POST', '/resource-servers', JSON.stringify({ uri: 'relative/api' }), 400],
      ['PATCH', '/clients/no-such-client', JSON.stringify({ client_name: 'x' }), 404],
    ] as const) {
      const answer = await rawAdminRequest(app, method, path, token, body);
      expect([method, path, body, answer.status, typeof answer.body.error]).toEqual([method, path, body, status, 'string']);
    }
    const unsupported = await rawAdminRequest(app, 'POST', '/clients', token, 'client_name=x', 'application/x-www-form-urlencoded');
    expect([unsupported.status, typeof unsupported.body.error]).toEqual([415, 'string']);
    for (const [method, path] of [
      ['GET', '/clients/no-such-client'],
      ['POST', '/clients/no-such-client/secret'],
      ['DELETE', '/clients/no-such-client'],
      ['GET', '/clients/no-such-client/grants'],
      ['GET', '/clients/no-such-client/sessions'],
      ['DELETE', `/clients/no-such-client/grants/${grantee}`],
      ['DELETE', `/clients/${target.clientId}/grants/not-a-uuid`],
      ['DELETE', `/clients/${target.clientId}/grants/00000000-0000-4000-8000-000000000000`],
      ['DELETE', '/resource-servers/not-a-uuid'],
      ['DELETE', '/resource-servers/00000000-0000-4000-8000-000000000000'],
    ]) {
      const answer = await admin.request(method, path, token);
      expect([method, path, answer.status, answer.body.error]).toEqual([method, path, 404, 'not_found']);
    }
    expect(await tableSnapshot(app.dataSource, CLIENT_TABLES)).toBe(before);
  });

  it('deleting a client revokes its tokens at once, as clients:delete does', async () => {
    const client = await app.createClient({ name: 'Doomed' });
    const { accessToken } = await personWithGrant(app, client, 'notes:read');
    const readNotes = () => fetch(app.url('/api/v1/notes'), { headers: { authorization: `Bearer ${accessToken}` } }).then((response) => response.status);
    expect(await readNotes()).toBe(200);
    expect((await admin.request('DELETE', `/clients/${client.clientId}`, callers.clientAdmin.token)).status).toBe(204);
    expect(await readNotes()).toBe(401);
    expect(await app.app.get(ClientsService).findById(client.clientId)).toBeNull();
    expect((await admin.request('GET', `/clients/${client.clientId}`, callers.auditor.token)).status).toBe(404);
  });

  it('the CLI and the API write the same audit events for the same changes', async () => {
    const actions = async (subject: string) => (await auditEventsOf(app.dataSource, subject)).map(([, action]) => action);
    const cli = async (...args: string[]) => {
      const result = await runCli(args);
      if (result.code !== 0) throw new Error(result.stderr);
      return JSON.parse(result.stdout) as Record<string, unknown>;
    };
    const byCli = String((await cli('clients:create', '--name', 'CLI robot', '--grant-type', 'client_credentials', '--scope', 'notes:read')).client_id);
    await cli('clients:rotate-secret', '--client-id', byCli);
    await cli('clients:delete', '--client-id', byCli);
    const byApi = String((await admin.request('POST', '/clients', callers.clientAdmin.token, serviceClientMetadata('API robot'))).body.client_id);
    await admin.request('POST', `/clients/${byApi}/secret`, callers.clientAdmin.token);
    await admin.request('DELETE', `/clients/${byApi}`, callers.clientAdmin.token);
    expect(await actions(`client:${byApi}`)).toEqual(await actions(`client:${byCli}`));
    expect(await actions(`client:${byApi}`)).toEqual(['client.registered', 'client.secret_rotated', 'client.deleted']);

    const serverByCli = String((await cli('resources:register', '--uri', 'https://cli-rs.example.com/api', '--name', 'CLI RS')).id);
    await cli('resources:delete', '--uri', 'https://cli-rs.example.com/api');
    const serverByApi = String((await admin.request('POST', '/resource-servers', callers.clientAdmin.token, { uri: 'https://api-rs.example.com/api', name: 'API RS' })).body.id);
    expect((await admin.request('DELETE', `/resource-servers/${serverByApi}`, callers.clientAdmin.token)).status).toBe(204);
    expect(await actions(`resource_server:${serverByApi}`)).toEqual(await actions(`resource_server:${serverByCli}`));
    const apiEvents = await auditEventsOf(app.dataSource, `client:${byApi}`);
    expect(apiEvents.map(([actor, , , ip]) => [actor, ip])).toEqual(Array(3).fill([`user:${callers.clientAdmin.userId}`, '127.0.0.1']));
  }, 120_000);
});
