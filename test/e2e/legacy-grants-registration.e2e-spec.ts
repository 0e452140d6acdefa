import { TestApp, type RegisteredClient } from '../helpers/test-app.js';
import { tokenRequest } from '../helpers/oauth-flow.js';

/**
 * The implicit and password grants over dynamic registration (RFC 7591): only an administrator (a
 * clients:register token) may ask for them; a client managing itself (RFC 7592) cannot add them.
 */
describe('legacy grants in client registration (RFC 7591 §2, RFC 7592 §2.2)', () => {
  let app: TestApp;
  let adminToken: string;

  beforeAll(async () => {
    app = await TestApp.start();
    const admin: RegisteredClient = await app.createClient({ name: 'admin', redirectUris: [], grantTypes: ['client_credentials'], scope: 'clients:register' });
    const reply = await tokenRequest(app, admin, { grant_type: 'client_credentials' });
    adminToken = reply.body.access_token as string;
  });
  afterAll(async () => app?.stop());

  async function call(method: string, path: string, token: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
    const response = await fetch(app.url(path), { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await response.text();
    return { status: response.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }

  const base = { client_name: 'Legacy', redirect_uris: ['https://legacy.example/cb'], scope: 'notes:read' };

  it('gives neither grant by default', async () => {
    const reply = await call('POST', '/register', adminToken, base);
    expect(reply.status).toBe(201);
    expect(reply.json).toMatchObject({ grant_types: ['authorization_code'], response_types: ['code'] });
  });

  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['implicit, response_types defaulting to token', { grant_types: ['implicit'] }, { grant_types: ['implicit'], response_types: ['token'] }],
    ['implicit with response_types token', { grant_types: ['implicit'], response_types: ['token'], token_endpoint_auth_method: 'none' }, { grant_types: ['implicit'], response_types: ['token'], token_endpoint_auth_method: 'none' }],
    ['code and implicit', { grant_types: ['authorization_code', 'implicit'] }, { grant_types: ['authorization_code', 'implicit'], response_types: ['code', 'token'] }],
    ['password for a confidential client', { grant_types: ['password'], redirect_uris: [] }, { grant_types: ['password'], response_types: [], client_secret: expect.stringMatching(/^lk_cs_/) }],
  ])('an admin-authorized registration may ask for %s', async (_case, change, expected) => {
    const reply = await call('POST', '/register', adminToken, { ...base, ...change });
    expect(reply.status).toBe(201);
    expect(reply.json).toMatchObject(expected);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['password for a public client', { grant_types: ['password'], redirect_uris: [], token_endpoint_auth_method: 'none' }, 'invalid_client_metadata'],
    ['implicit without a redirect URI', { grant_types: ['implicit'], redirect_uris: [] }, 'invalid_redirect_uri'],
    ['implicit with response_types code only', { grant_types: ['implicit'], response_types: ['code'] }, 'invalid_client_metadata'],
    ['response_types token without implicit', { grant_types: ['authorization_code'], response_types: ['code', 'token'] }, 'invalid_client_metadata'],
    ['the combined response type "code token"', { grant_types: ['authorization_code', 'implicit'], response_types: ['code token'] }, 'invalid_client_metadata'],
  ])('refuses %s (RFC 7591 §3.2.2) and registers nothing', async (_case, change, error) => {
    const before = (await app.dataSource.query<unknown[]>('SELECT id FROM clients')).length;
    const reply = await call('POST', '/register', adminToken, { ...base, ...change });
    expect({ status: reply.status, error: reply.json.error }).toEqual({ status: 400, error });
    expect((await app.dataSource.query<unknown[]>('SELECT id FROM clients')).length).toBe(before);
  });

  describe('a client managing itself with its registration access token (RFC 7592)', () => {
    it.each<[string, string[]]>([
      ['implicit', ['authorization_code', 'implicit']],
      ['password', ['authorization_code', 'password']],
    ])('cannot add the %s grant: invalid_client_metadata, the client unchanged', async (_grant, grantTypes) => {
      const registered = await call('POST', '/register', adminToken, base);
      const id = registered.json.client_id as string;
      const rat = registered.json.registration_access_token as string;
      const reply = await call('PUT', `/register/${id}`, rat, { ...base, client_id: id, grant_types: grantTypes });
      expect({ status: reply.status, error: reply.json.error }).toEqual({ status: 400, error: 'invalid_client_metadata' });
      const rows = await app.dataSource.query<{ grant_types: string }[]>(`SELECT grant_types FROM clients WHERE id = '${id}'`);
      expect(JSON.parse(rows[0].grant_types)).toEqual(['authorization_code']);
    });

    it('may keep or drop a legacy grant the administrator gave it', async () => {
      const registered = await call('POST', '/register', adminToken, { ...base, grant_types: ['authorization_code', 'implicit'] });
      const id = registered.json.client_id as string;
      const rat = registered.json.registration_access_token as string;
      const kept = await call('PUT', `/register/${id}`, rat, { ...base, client_id: id, client_name: 'Renamed', grant_types: ['authorization_code', 'implicit'] });
      expect({ status: kept.status, grant_types: kept.json.grant_types }).toEqual({ status: 200, grant_types: ['authorization_code', 'implicit'] });
      const dropped = await call('PUT', `/register/${id}`, rat, { ...base, client_id: id, grant_types: ['authorization_code'] });
      expect({ status: dropped.status, grant_types: dropped.json.grant_types, response_types: dropped.json.response_types }).toEqual({ status: 200, grant_types: ['authorization_code'], response_types: ['code'] });
      const readded = await call('PUT', `/register/${id}`, rat, { ...base, client_id: id, grant_types: ['authorization_code', 'implicit'] });
      expect({ status: readded.status, error: readded.json.error }).toEqual({ status: 400, error: 'invalid_client_metadata' });
    });
  });
});
