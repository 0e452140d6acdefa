/**
 * Issue 48: upstream identity providers over the admin API, through the service `idps:*` call.
 * A client secret (or key) never travels as a value, and over HTTP is named only by an
 * environment variable of the LATCHKEY_IDP_ family (never a file, never DATABASE_URL): anything
 * else is a 400 with nothing stored. Read by the auditor, changed by an owner, audited with both.
 */
import { IdentityProvidersService } from '../../src/identity-providers/identity-providers.service.js';
import { AdminApi, tableSnapshot } from '../helpers/admin-api.js';
import { adminCallers, allPages, expectDescribedAs, expectOwnerOnly, SYSTEM_TABLES, type AdminCallers } from '../helpers/admin-system-api.js';
import { TestApp } from '../helpers/test-app.js';

type Row = Record<string, unknown>;

const SECRET = 'upstream-client-secret-value-7f3a';
/** Nothing listens there: the provider is only stored, never reached. */
const ISSUER = 'http://127.0.0.1:9/contoso';
const reference = (env: string) => ({ method: 'client_secret_basic', secret: { env } });
const oidc = (id: string, clientAuth: unknown = reference('LATCHKEY_IDP_CONTOSO_SECRET')) => ({ id, name: 'Contoso', protocol: 'oidc', settings: { issuer: ISSUER, client_id: 'latchkey', client_auth: clientAuth, domains: [`${id}.example`], create_accounts: false } });

describe('admin API: upstream identity providers', () => {
  let app: TestApp;
  let admin: AdminApi;
  let callers: AdminCallers;

  beforeAll(async () => {
    app = await TestApp.start({ LATCHKEY_IDP_CONTOSO_SECRET: SECRET });
    admin = await AdminApi.setUp(app);
    callers = await adminCallers(admin);
  });

  afterAll(async () => {
    await app.stop();
  });

  it('an owner creates a provider with its secret by reference; it is shown by snake_case names, never with the value', async () => {
    const created = await admin.request('POST', '/identity-providers', callers.owner, oidc('contoso'));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: 'contoso',
      name: 'Contoso',
      protocol: 'oidc',
      enabled: true,
      redirect_uri: expect.stringMatching(/\/federation\/contoso\/callback$/),
      settings: { issuer: ISSUER, client_id: 'latchkey', client_auth: { method: 'client_secret_basic', secret: { env: 'LATCHKEY_IDP_CONTOSO_SECRET' } }, create_accounts: false, mapping: { given_name: 'given_name' } },
    });
    const shown = await admin.request('GET', '/identity-providers/contoso', callers.auditor);
    expect(shown.body).toEqual({ ...created.body, linked_people: 0 });
    const stored = JSON.stringify(await app.dataSource.query(`SELECT * FROM "identity_providers"`));
    for (const text of [JSON.stringify(created.body), JSON.stringify(shown.body), stored]) expect(text).not.toContain(SECRET);
  });

  it('refuses a client secret sent as a value, a file, or any variable outside LATCHKEY_IDP_, with nothing stored', async () => {
    const before = await tableSnapshot(app.dataSource, SYSTEM_TABLES);
    const bodies: [string, unknown][] = [
      ['a literal secret', oidc('literal', { method: 'client_secret_basic', secret: SECRET })],
      ['client_secret beside client_auth', { ...oidc('beside'), settings: { ...oidc('beside').settings, client_secret: SECRET } }],
      ['a file', oidc('file', { method: 'client_secret_post', secret: { file: '/etc/hostname' } })],
      ['the database URL', oidc('database', reference('DATABASE_URL'))],
      ['a secret typed as the name', oidc('typed', reference(SECRET))],
      ['a private key as a value', oidc('jwk', { method: 'private_key_jwt', key: { kty: 'EC', crv: 'P-256', d: 'c2VjcmV0' } })],
      ['a private key from a file', oidc('keyfile', { method: 'private_key_jwt', key: { file: 'key.pem' } })],
      ['SAML metadata from a file', { id: 'saml-file', protocol: 'saml', settings: { metadata_file: '/etc/passwd' } }],
      ['camelCase settings', { ...oidc('camel'), settings: { issuer: ISSUER, clientId: 'latchkey' } }],
      ['an unknown field', { ...oidc('unknown'), secret: SECRET }],
    ];
    for (const [what, body] of bodies) {
      const response = await admin.request('POST', '/identity-providers', callers.owner, body);
      expect({ what, status: response.status, error: response.body.error }).toEqual({ what, status: 400, error: 'invalid_request' });
      expect(JSON.stringify(response.body)).not.toContain(SECRET);
    }
    const update = await admin.request('PATCH', '/identity-providers/contoso', callers.owner, { settings: { client_auth: { method: 'client_secret_post', secret: SECRET } } });
    expect(update.status).toBe(400);
    expect(await tableSnapshot(app.dataSource, SYSTEM_TABLES)).toBe(before);
  });

  it('an owner updates and deletes it; each change audited with who and from where', async () => {
    const updated = await admin.request('PATCH', '/identity-providers/contoso', callers.owner, { name: 'Contoso Ltd', enabled: false, settings: { trust_email: true } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name: 'Contoso Ltd', enabled: false, settings: { trust_email: true, client_id: 'latchkey', client_auth: { secret: { env: 'LATCHKEY_IDP_CONTOSO_SECRET' } } } });
    expect((await admin.request('PATCH', '/identity-providers/contoso', callers.owner, { protocol: 'saml' })).status).toBe(400);
    const deleted = await admin.request('DELETE', '/identity-providers/contoso', callers.owner);
    expect([deleted.status, deleted.body]).toEqual([200, { deleted: 'contoso', links_removed: 0 }]);
    expect((await admin.request('GET', '/identity-providers/contoso', callers.owner)).status).toBe(404);
    const events = (await app.dataSource.query(`SELECT "actor", "ip", "action" FROM "audit_events" WHERE "subject" = 'idp:contoso' ORDER BY "at", "id"`)) as Row[];
    expect(events.map((e) => [e.actor, e.ip, e.action])).toEqual(['idp.created', 'idp.updated', 'idp.deleted'].map((action) => [`user:${callers.ownerId}`, '127.0.0.1', action]));
  });

  it('lists them by id, paged, for the auditor; a cursor not issued here is a 400', async () => {
    const providers = app.app.get(IdentityProvidersService);
    for (const id of ['list-c', 'list-a', 'list-b']) await providers.create({ id, protocol: 'oidc', settings: { issuer: ISSUER, clientId: 'latchkey' } }, 'cli');
    const { items, pages } = await allPages(admin, '/identity-providers?limit=2', callers.auditor);
    expect(items.map((item) => item.id)).toEqual(['list-a', 'list-b', 'list-c']);
    expect(pages).toBe(2);
    expect(items[0]).toMatchObject({ settings: { client_auth: { method: 'none' } } });
    const forged = Buffer.from(JSON.stringify(['x', 'Not An Id'])).toString('base64url');
    expect((await admin.request('GET', `/identity-providers?cursor=${forged}`, callers.auditor)).status).toBe(400);
    for (const token of [callers.helpdesk, callers.clientAdmin]) expect((await admin.request('GET', '/identity-providers', token)).status).toBe(403);
  });

  it("every changing route is an owner's alone; refused, nothing changes", async () => {
    await app.app.get(IdentityProvidersService).create({ id: 'guarded', protocol: 'oidc', settings: { issuer: ISSUER, clientId: 'latchkey' } }, 'cli');
    await expectOwnerOnly(admin, callers, 'POST', '/identity-providers', oidc('intruder'));
    await expectOwnerOnly(admin, callers, 'PATCH', '/identity-providers/guarded', { enabled: false });
    await expectOwnerOnly(admin, callers, 'DELETE', '/identity-providers/guarded');
    for (const [method, path] of [['GET', '/identity-providers'], ['GET', '/identity-providers/{id}'], ['POST', '/identity-providers'], ['PATCH', '/identity-providers/{id}'], ['DELETE', '/identity-providers/{id}']]) {
      await expectDescribedAs(admin, method, path, 'system', method === 'GET' ? 'read' : 'write');
    }
  });
});
