/**
 * Issue 48: clients as code over the admin API (POST /client-declarations/plan, PUT
 * /client-declarations), through clients:apply's ClientDeclarations. Refused without a token, for
 * a token lacking admin:clients and for a person without the role or whose role was removed, with
 * nothing written. Over HTTP a secret is read only from a LATCHKEY_CLIENT_ variable: a file, any
 * other variable or a value is a 400. A client administrator's document never creates, changes or
 * deletes a client holding an owner-only scope; the admin console's own client is never pruned;
 * a refused document changes nothing.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_ADMINISTRATOR } from '../../src/clients/client-change-policy.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { CONSOLE_CLIENT_ID } from '../../src/clients/console-client-id.js';
import { AdminApi, tableSnapshot } from '../helpers/admin-api.js';
import { adminCallers, auditEventsOf, CLIENT_TABLES, demotedAdmin, rawAdminRequest, type AdminCallers } from '../helpers/admin-clients-api.js';
import { expectDescribedAs } from '../helpers/admin-system-api.js';
import { runCli } from '../helpers/cli.js';
import { clientCredentialsStatus } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient } from '../helpers/test-app.js';

type Row = Record<string, unknown>;

const newSecret = (): string => randomBytes(32).toString('base64url');
const SECRETS = { LATCHKEY_CLIENT_REPORTS_SECRET: newSecret(), LATCHKEY_CLIENT_ROTATED_SECRET: newSecret() };
const reports = { client_id: 'reports', client_name: 'Reports', grant_types: ['client_credentials'], scope: 'notes:read', client_secret: { env: 'LATCHKEY_CLIENT_REPORTS_SECRET' } };
const spa = { client_id: 'spa', client_name: 'Single page', token_endpoint_auth_method: 'none', redirect_uris: ['https://spa.example.com/cb'] };
const declaration = (clients: unknown[], keepUnlisted = true) => ({ document: { clients }, keep_unlisted: keepUnlisted });

describe('admin API: clients as code', () => {
  let app: TestApp;
  let admin: AdminApi;
  let callers: AdminCallers;
  let scimConnector: RegisteredClient;
  const answered: string[] = [];

  async function call(method: string, path: string, token: string | undefined, body?: unknown) {
    const response = await admin.request(method, path, token, body);
    answered.push(JSON.stringify(response.body));
    return response;
  }

  beforeAll(async () => {
    app = await TestApp.start(SECRETS);
    admin = await AdminApi.setUp(app);
    callers = await adminCallers(admin);
    scimConnector = await app.createClient({ name: 'Directory connector', scope: 'scim', grantTypes: ['client_credentials'] as never, redirectUris: [] });
  });

  afterAll(async () => {
    await app.stop();
    // No secret in any answer, whatever it was.
    for (const secret of Object.values(SECRETS)) expect(answered.join('\n')).not.toContain(secret);
  });

  it('is refused without a token (401), for admin:read, admin:people, a person without a role and a demoted client administrator (403); nothing is written', async () => {
    const demoted = (await demotedAdmin(admin, 'client-admin')).token;
    const before = await tableSnapshot(app.dataSource, CLIENT_TABLES);
    for (const [method, path] of [['POST', '/client-declarations/plan'], ['PUT', '/client-declarations']]) {
      expect((await call(method, path, undefined, declaration([reports]))).status).toBe(401);
      for (const token of [callers.auditor.token, callers.helpdesk.token, callers.nobody.token, demoted]) {
        const refused = await call(method, path, token, declaration([reports]));
        expect([method, path, refused.status, refused.body.error]).toEqual([method, path, 403, 'insufficient_scope']);
      }
      await expectDescribedAs(admin, method, path, 'clients', 'write');
    }
    expect(await tableSnapshot(app.dataSource, CLIENT_TABLES)).toBe(before);
  });

  it('plans without changing anything, then applies: the clients, their secrets from LATCHKEY_CLIENT_ variables, audited with who and from where', async () => {
    const before = await tableSnapshot(app.dataSource, CLIENT_TABLES);
    const plan = await call('POST', '/client-declarations/plan', callers.clientAdmin.token, declaration([reports, spa]));
    expect(plan.status).toBe(200);
    expect(plan.body).toMatchObject({ applied: false, summary: { create: 2, update: 0, delete: 0, unchanged: 0, keep: 2 } });
    expect((plan.body.plan as Row[]).filter((entry) => entry.action === 'create').map((entry) => entry.client_id)).toEqual(['reports', 'spa']);
    expect(await tableSnapshot(app.dataSource, CLIENT_TABLES)).toBe(before);

    const applied = await call('PUT', '/client-declarations', callers.clientAdmin.token, declaration([reports, spa]));
    expect([applied.status, applied.body.applied, applied.body.plan]).toEqual([200, true, plan.body.plan]);
    expect(await clientCredentialsStatus(app.baseUrl, { clientId: 'reports', clientSecret: SECRETS.LATCHKEY_CLIENT_REPORTS_SECRET, redirectUri: '' })).toBe(200);
    const [registered] = await auditEventsOf(app.dataSource, 'client:reports');
    expect([registered[0], registered[1], registered[3]]).toEqual([`user:${callers.clientAdmin.userId}`, 'client.registered', '127.0.0.1']);

    const renamed = { ...reports, client_name: 'Reports (prod)', client_secret: { env: 'LATCHKEY_CLIENT_ROTATED_SECRET' } };
    const change = await call('POST', '/client-declarations/plan', callers.clientAdmin.token, declaration([renamed, spa]));
    expect((change.body.plan as Row[]).find((entry) => entry.client_id === 'reports')).toEqual({ client_id: 'reports', client_name: 'Reports (prod)', action: 'update', changes: { client_name: { old: 'Reports', new: 'Reports (prod)' }, client_secret: 'changed' } });
    expect((await call('PUT', '/client-declarations', callers.clientAdmin.token, declaration([renamed, spa]))).status).toBe(200);
    expect(await clientCredentialsStatus(app.baseUrl, { clientId: 'reports', clientSecret: SECRETS.LATCHKEY_CLIENT_ROTATED_SECRET, redirectUri: '' })).toBe(200);
    expect((await auditEventsOf(app.dataSource, 'client:reports')).map(([actor, action, , ip]) => [actor, action, ip])).toEqual(
      ['client.registered', 'client.updated', 'client.secret_rotated'].map((action) => [`user:${callers.clientAdmin.userId}`, action, '127.0.0.1']),
    );
  });

  it('refuses a secret read from a file, from a variable outside LATCHKEY_CLIENT_, or sent as a value (400, a clear error); nothing is written', async () => {
    const before = await tableSnapshot(app.dataSource, CLIENT_TABLES);
    const withSecret = (client_secret: unknown) => [{ ...reports, client_id: 'leaky', client_secret }];
    for (const [why, clients, says] of [
      ['an absolute file', withSecret({ file: '/etc/hostname' }), /names a file: over the admin API only \{'env': 'LATCHKEY_CLIENT_\.\.\.'\}/],
      ['a relative file', withSecret({ file: 'reports.secret' }), /names a file/],
      ['the database URL', withSecret({ env: 'DATABASE_URL' }), /names 'DATABASE_URL': over the admin API only an environment variable LATCHKEY_CLIENT_/],
      ["an identity provider's variable", withSecret({ env: 'LATCHKEY_IDP_CONTOSO_SECRET' }), /only an environment variable LATCHKEY_CLIENT_/],
      ['a lower-case name', withSecret({ env: 'latchkey_client_reports_secret' }), /only an environment variable LATCHKEY_CLIENT_/],
      ['a value', withSecret(SECRETS.LATCHKEY_CLIENT_REPORTS_SECRET), /must say where the secret is, \{'env': 'LATCHKEY_CLIENT_\.\.\.'\}, not hold it/],
      ['a variable not set', withSecret({ env: 'LATCHKEY_CLIENT_NOT_SET' }), /the environment variable LATCHKEY_CLIENT_NOT_SET is not set/],
      ['no secret for a confidential client', [{ ...reports, client_id: 'leaky', client_secret: undefined }], /client_secret is required for 'client_secret_basic': \{'env': 'LATCHKEY_CLIENT_\.\.\.'\}/],
    ] as const) {
      for (const [method, path] of [['POST', '/client-declarations/plan'], ['PUT', '/client-declarations']]) {
        const refused = await call(method, path, callers.owner.token, declaration(clients as unknown[]));
        expect([why, method, refused.status, refused.body.error]).toEqual([why, method, 400, 'invalid_client_metadata']);
        expect([why, refused.body.error_description]).toEqual([why, expect.stringMatching(says)]);
      }
    }
    expect(answered.join('\n')).not.toContain(process.env.DATABASE_URL);
    expect(await tableSnapshot(app.dataSource, CLIENT_TABLES)).toBe(before);
  });

  it("a client administrator's document cannot create, change or prune a client holding an owner-only scope; a refused document changes nothing", async () => {
    const before = await tableSnapshot(app.dataSource, CLIENT_TABLES);
    const robot = { client_id: 'robot', client_name: 'Robot', token_endpoint_auth_method: 'none', redirect_uris: ['https://robot.example.com/cb'] };
    for (const [why, body, status, error, says] of [
      ['creates one with admin:read', declaration([robot, { ...spa, client_id: 'auditor-robot', scope: 'admin:read' }]), 400, 'invalid_client_metadata', /auditor-robot.*admin:read can be granted only by an owner/],
      ['changes the directory connector', declaration([robot, { client_id: scimConnector.clientId, client_name: 'Moved', grant_types: ['client_credentials'], scope: 'scim', client_secret: { env: 'LATCHKEY_CLIENT_REPORTS_SECRET' } }]), 403, 'admin_client_protected', /holds scim; only an owner/],
      ['prunes the console and the connector', declaration([robot, reports, spa], false), 403, 'admin_client_protected', new RegExp(`(${admin.console.clientId}|${scimConnector.clientId}) \\(not in the document\\): it would be deleted.*(${admin.console.clientId}|${scimConnector.clientId}) \\(not in the document\\)`)],
      ['holds one bad entry beside a good one', declaration([robot, { ...spa, client_id: 'bad', redirect_uris: ['not a uri'] }]), 400, 'invalid_client_metadata', /clients\[1\] \(bad\)/],
    ] as const) {
      for (const [method, path] of [['POST', '/client-declarations/plan'], ['PUT', '/client-declarations']]) {
        const refused = await call(method, path, callers.clientAdmin.token, body);
        expect([why, method, refused.status, refused.body.error]).toEqual([why, method, status, error]);
        expect(refused.body.error_description).toMatch(says);
      }
    }
    expect(await tableSnapshot(app.dataSource, CLIENT_TABLES)).toBe(before);
    // An owner may: the same creation goes through.
    const owner = await call('PUT', '/client-declarations', callers.owner.token, declaration([{ ...spa, client_id: 'auditor-robot', scope: 'admin:read' }]));
    expect([owner.status, owner.body.summary]).toMatchObject([200, { create: 1 }]);
  });

  it('malformed bodies are 400 (415 for another media type); nothing is written', async () => {
    const before = await tableSnapshot(app.dataSource, CLIENT_TABLES);
    for (const body of [
      '{"document": ',
      '[]',
      JSON.stringify({ document: { clients: [] } }),
      JSON.stringify({ document: { clients: [] }, keep_unlisted: 'yes' }),
      JSON.stringify({ document: { clients: [] }, keep_unlisted: true, prune: false }),
      JSON.stringify({ document: [], keep_unlisted: true }),
      JSON.stringify({ document: {}, keep_unlisted: true }),
      JSON.stringify({ keep_unlisted: true }),
      JSON.stringify({ document: { clients: [{ client_name: 'No id' }] }, keep_unlisted: true }),
      JSON.stringify({ document: { clients: [spa, spa] }, keep_unlisted: true }),
      JSON.stringify({ document: { clients: [{ ...spa, colour: 'blue' }] }, keep_unlisted: true }),
    ]) {
      const answer = await rawAdminRequest(app, 'PUT', '/client-declarations', callers.owner.token, body);
      expect([body, answer.status, typeof answer.body.error]).toEqual([body, 400, 'string']);
    }
    expect((await rawAdminRequest(app, 'PUT', '/client-declarations', callers.owner.token, 'clients: []', 'application/yaml')).status).toBe(415);
    expect(await tableSnapshot(app.dataSource, CLIENT_TABLES)).toBe(before);
  });

  it('the CLI and the API write the same audit events for the same document', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'latchkey-declarations-'));
    try {
      const robot = (id: string, name: string, env: string) => ({ client_id: id, client_name: name, grant_types: ['client_credentials'], scope: 'notes:read', client_secret: { env } });
      const cli = async (document: unknown) => {
        await writeFile(join(dir, 'clients.json'), JSON.stringify(document));
        const result = await runCli(['clients:apply', '-f', join(dir, 'clients.json'), '--keep-unlisted'], { env: SECRETS });
        expect([result.code, result.stderr]).toEqual([0, expect.stringContaining('plan for')]);
      };
      await cli({ clients: [robot('cli-robot', 'CLI robot', 'LATCHKEY_CLIENT_REPORTS_SECRET')] });
      await cli({ clients: [robot('cli-robot', 'CLI robot 2', 'LATCHKEY_CLIENT_ROTATED_SECRET')] });
      await call('PUT', '/client-declarations', callers.clientAdmin.token, declaration([robot('api-robot', 'API robot', 'LATCHKEY_CLIENT_REPORTS_SECRET')]));
      await call('PUT', '/client-declarations', callers.clientAdmin.token, declaration([robot('api-robot', 'API robot 2', 'LATCHKEY_CLIENT_ROTATED_SECRET')]));
      const actions = async (subject: string) => (await auditEventsOf(app.dataSource, subject)).map(([, action]) => action);
      expect(await actions('client:api-robot')).toEqual(await actions('client:cli-robot'));
      expect(await actions('client:api-robot')).toEqual(['client.registered', 'client.updated', 'client.secret_rotated']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it("an owner's document deletes the clients it leaves out, in one transaction, but never the admin console's own client", async () => {
    await app.app.get(ClientsService).create({ name: 'Latchkey admin console', redirectUris: ['https://id.example.com/admin/callback'], scope: 'openid admin:owner' }, CLI_ADMINISTRATOR, { clientId: CONSOLE_CLIENT_ID });
    const plan = await call('POST', '/client-declarations/plan', callers.owner.token, declaration([reports, spa], false));
    const entries = plan.body.plan as Row[];
    expect(entries.find((entry) => entry.client_id === CONSOLE_CLIENT_ID)).toEqual({ client_id: CONSOLE_CLIENT_ID, client_name: 'Latchkey admin console', action: 'keep', note: expect.stringMatching(/admin console/) });
    expect(entries.find((entry) => entry.client_id === scimConnector.clientId)?.action).toBe('delete');
    // The test's own console client goes too (the owner's token with it): applied all the same, as one transaction.
    const applied = await call('PUT', '/client-declarations', callers.owner.token, declaration([reports, spa], false));
    expect([applied.status, applied.body.plan]).toEqual([200, entries]);
    const remaining = (await app.app.get(ClientsService).list()).map((client) => client.id).sort();
    expect(remaining).toEqual([CONSOLE_CLIENT_ID, 'reports', 'spa'].sort());
    const [deleted] = await auditEventsOf(app.dataSource, `client:${scimConnector.clientId}`).then((events) => events.filter(([, action]) => action === 'client.deleted'));
    expect([deleted[0], deleted[3]]).toEqual([`user:${callers.owner.userId}`, '127.0.0.1']);
  });
});
