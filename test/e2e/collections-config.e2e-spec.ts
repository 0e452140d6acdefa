import { ADMIN_SCOPES } from '../../src/scopes/admin-scopes.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../src/app.setup.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { obtainCode, tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp } from '../helpers/test-app.js';

/** The collections file drives the API, its scopes, its indexes and its OpenAPI document. */
describe('collections file (COLLECTIONS_FILE)', () => {
  const original = process.env.COLLECTIONS_FILE;
  let app: TestApp;
  let token: string;

  beforeAll(async () => {
    app = await TestApp.start({ COLLECTIONS_FILE: join(process.cwd(), 'test', 'fixtures', 'tasks-collections.json') });
    const client = await app.createClient({ scope: 'tasks:read tasks:write' });
    const user = await app.createUser();
    const { code, pkce } = await obtainCode(app, client, user, { scope: 'tasks:read tasks:write' });
    const response = await tokenRequest(app, client, { grant_type: 'authorization_code', code, code_verifier: pkce.verifier, redirect_uri: client.redirectUri });
    token = response.body.access_token as string;
  });
  afterAll(async () => {
    await app?.stop();
    if (original === undefined) delete process.env.COLLECTIONS_FILE;
    else process.env.COLLECTIONS_FILE = original;
  });

  const api = (path: string, init: RequestInit = {}) =>
    fetch(app.url(`/api/v1${path}`), { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(init.headers as Record<string, string>) } });

  it("offers exactly the scopes of the declared collections, besides OpenID Connect's and the client scopes", async () => {
    const metadata = (await (await fetch(app.url('/.well-known/oauth-authorization-server'))).json()) as { scopes_supported: string[] };
    expect(metadata.scopes_supported).toEqual(['openid', 'profile', 'email', 'offline_access', 'tasks:read', 'tasks:write', 'clients:register', 'tokens:introspect', 'scim', 'admin:read', 'admin:people', 'admin:clients', 'admin:owner']);
    await expect(app.app.get(ClientsService).create({ name: 'x', redirectUris: ['https://a.example/cb'], scope: 'notes:read' })).rejects.toThrow(/Unknown scope\(s\): notes:read/);
    expect((await api('/notes')).status).toBe(404);
  });

  it('filters integers and numbers by value and sorts them numerically, in the database', async () => {
    for (const [name, priority, weight] of [['a', 10, 2.5], ['b', 9, 10], ['c', 10, -1], ['d', 100, 0.5]] as const) {
      expect((await api('/tasks', { method: 'POST', body: JSON.stringify({ name, priority, weight, labels: [name, 'all'] }) })).status).toBe(201);
    }
    const names = async (query: string) => ((await (await api(`/tasks?${query}`)).json()) as { name: string }[]).map((t) => t.name);
    expect(await names('priority=10')).toEqual(['a', 'c']);
    expect(await names('weight=2.5')).toEqual(['a']);
    expect(await names('labels=d')).toEqual(['d']);
    // Numeric order: 9 < 10 < 100 (a text sort would put "100" before "9").
    expect(await names('sort=priority')).toEqual(['b', 'a', 'c', 'd']);
    expect(await names('sort=-weight')).toEqual(['b', 'a', 'd', 'c']);
    for (const bad of ['priority=high', 'priority=1.5', 'weight=1e', 'name=a']) {
      const response = await api(`/tasks?${bad}`);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: 'invalid_request' });
    }
  });

  it('documents the declared collections in the OpenAPI document at /api/docs/json', async () => {
    const response = await fetch(app.url('/api/docs/json'));
    expect(response.status).toBe(200);
    const document = (await response.json()) as {
      openapi: string;
      paths: Record<string, Record<string, { security: unknown[] }>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown>; additionalProperties?: boolean }>; securitySchemes: Record<string, { type: string; flows?: { authorizationCode: { scopes: Record<string, string> } } }> };
    };
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths).filter((path) => !path.startsWith('/admin/api/')).sort()).toEqual(['/tasks', '/tasks/{id}']);
    expect(Object.keys(document.paths['/tasks/{id}']).sort()).toEqual(['delete', 'get', 'options', 'patch', 'put']);
    expect(document.paths['/tasks'].post.security).toEqual([{ bearer: [] }, { mac: [] }, { oauth2: ['tasks:write'] }]);
    expect(document.components.schemas.TaskAttributes.additionalProperties).toBe(false);
    expect(Object.keys(document.components.schemas.TaskAttributes.properties!)).toEqual(['name', 'priority', 'weight', 'labels']);
    expect(document.components.securitySchemes.bearer.type).toBe('http');
    expect(document.components.securitySchemes.oauth2.flows!.authorizationCode.scopes).toEqual({ 'tasks:read': 'See your tasks', 'tasks:write': 'Create, change and delete your tasks', ...ADMIN_SCOPES });
  });

  it('serves Swagger UI at /api/docs with a policy that lets it run from this origin only', async () => {
    const response = await fetch(app.url('/api/docs'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });
});

describe('a bad collections file', () => {
  const original = process.env.COLLECTIONS_FILE;
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'latchkey-bad-collections-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    if (original === undefined) delete process.env.COLLECTIONS_FILE;
    else process.env.COLLECTIONS_FILE = original;
  });

  it.each([
    ['is missing', undefined, /Invalid collections file .*nope\.json:\n {2}- ENOENT/],
    ['declares a sortable attribute that does not exist', { collections: { tasks: { schema: { type: 'object', properties: { name: { type: 'string' } } }, sortable: ['rank'] } } }, /collection "tasks": sortable names "rank"/],
  ])('stops start-up when it %s, naming the problem', async (_case, content, message) => {
    const file = join(dir, 'nope.json');
    rmSync(file, { force: true });
    if (content) writeFileSync(file, JSON.stringify(content));
    process.env.COLLECTIONS_FILE = file;
    await expect(createApp({ level: 'silent' })).rejects.toThrow(message);
  });
});
