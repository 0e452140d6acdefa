import { exportJWK, generateKeyPair } from 'jose';
import { AuditService } from '../../src/audit/audit.service.js';
import { hashSecret } from '../../src/common/secrets.js';
import { basicAuth, obtainCode, tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient } from '../helpers/test-app.js';

/** Dynamic client registration (RFC 7591) and its management (RFC 7592), as an admin script drives it. */
describe('client registration over HTTP (RFC 7591, RFC 7592)', () => {
  let app: TestApp;
  let admin: RegisteredClient;
  let adminToken: string;

  beforeAll(async () => {
    app = await TestApp.start({ ISSUER: 'https://auth.example.test' });
    admin = await app.createClient({ name: 'admin', redirectUris: [], grantTypes: ['client_credentials'], scope: 'clients:register' });
    adminToken = await clientToken(admin);
  });
  afterAll(async () => app?.stop());

  async function clientToken(client: RegisteredClient, scope?: string): Promise<string> {
    const result = await tokenRequest(app, client, { grant_type: 'client_credentials', ...(scope ? { scope } : {}) });
    expect(result.status).toBe(200);
    return result.body.access_token as string;
  }

  async function call(method: string, path: string, token: string | undefined, body?: unknown): Promise<{ status: number; headers: Headers; json: Record<string, unknown> }> {
    const response = await fetch(app.url(path), {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }

  const metadata = { client_name: 'Photo Printer', redirect_uris: ['https://printer.example/cb'], grant_types: ['authorization_code', 'refresh_token'], scope: 'photos:read' };

  it('registers a client, which then completes the authorization code flow; the secret and registration token are shown once and stored as hashes', async () => {
    const registered = await call('POST', '/register', adminToken, metadata);
    expect(registered.status).toBe(201);
    expect(registered.headers.get('cache-control')).toBe('no-store');
    expect(registered.json).toMatchObject({
      client_id: expect.any(String),
      client_secret: expect.stringMatching(/^lk_cs_/),
      client_name: 'Photo Printer',
      redirect_uris: ['https://printer.example/cb'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: 'photos:read',
      registration_access_token: expect.stringMatching(/^lk_rat_[A-Za-z0-9_-]{43}$/),
      registration_client_uri: `https://auth.example.test/register/${registered.json.client_id as string}`,
    });
    const row = await app.dataSource.query<{ secret_hash: string; registration_token_hash: string }[]>(`SELECT secret_hash, registration_token_hash FROM clients WHERE id = '${registered.json.client_id as string}'`);
    expect(row[0]).toEqual({ secret_hash: hashSecret(registered.json.client_secret as string), registration_token_hash: hashSecret(registered.json.registration_access_token as string) });

    const client: RegisteredClient = { clientId: registered.json.client_id as string, clientSecret: registered.json.client_secret as string, redirectUri: 'https://printer.example/cb' };
    const user = await app.createUser();
    const { code, pkce } = await obtainCode(app, client, user, { scope: 'photos:read' });
    const tokens = await tokenRequest(app, client, { grant_type: 'authorization_code', code, code_verifier: pkce.verifier, redirect_uri: client.redirectUri });
    expect(tokens.status).toBe(200);
  });

  it('registers a public client for the device authorization grant (RFC 8628 §3.1), without redirect URIs, which gets device codes; a FAPI 2.0 one is refused', async () => {
    const device = { client_name: 'Set-top box', grant_types: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'], token_endpoint_auth_method: 'none', scope: 'photos:read' };
    const registered = await call('POST', '/register', adminToken, device);
    expect(registered.status).toBe(201);
    expect(registered.json).toMatchObject({ grant_types: device.grant_types, response_types: [], token_endpoint_auth_method: 'none' });
    const started = await fetch(app.url('/device_authorization'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ client_id: registered.json.client_id as string }).toString() });
    expect(started.status).toBe(200);
    expect(await started.json()).toMatchObject({ verification_uri: 'https://auth.example.test/device', interval: 5, expires_in: 600 });

    const { publicKey } = await generateKeyPair('ES256');
    const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] };
    const fapi = await call('POST', '/register', adminToken, { ...device, token_endpoint_auth_method: 'private_key_jwt', security_profile: 'fapi2', require_pushed_authorization_requests: true, dpop_bound_access_tokens: true, id_token_signed_response_alg: 'ES256', jwks });
    expect(fapi.status).toBe(400);
    expect(fapi.json).toMatchObject({ error: 'invalid_client_metadata', error_description: expect.stringContaining('grant_types must not include urn:ietf:params:oauth:grant-type:device_code') });
  });

  it('reads, updates and deletes the client with its registration access token, which opens no other client', async () => {
    const registered = await call('POST', '/register', adminToken, metadata);
    const id = registered.json.client_id as string;
    const rat = registered.json.registration_access_token as string;

    const read = await call('GET', `/register/${id}`, rat);
    expect(read.status).toBe(200);
    expect(read.json).toMatchObject({ client_id: id, client_name: 'Photo Printer' });
    expect(read.json).not.toHaveProperty('client_secret');
    expect(read.json).not.toHaveProperty('registration_access_token');

    // An administrator (a clients:register token of another client) manages it too (issue 15).
    expect((await call('GET', `/register/${id}`, adminToken)).status).toBe(200);
    expect((await call('GET', `/register/${admin.clientId}`, rat)).status).toBe(401);
    expect((await call('PUT', `/register/${id}`, rat, { ...metadata, client_name: 'Renamed' })).json.error).toBe('invalid_client_metadata');
    expect((await call('PUT', `/register/${id}`, rat, { ...metadata, client_id: id, token_endpoint_auth_method: 'none' })).json.error).toBe('invalid_client_metadata');
    expect((await call('PUT', `/register/${id}`, rat, { ...metadata, client_id: id, client_secret: 'lk_cs_chosen' })).json.error).toBe('invalid_client_metadata');

    const updated = await call('PUT', `/register/${id}`, rat, { ...metadata, client_id: id, client_name: 'Renamed', client_secret: registered.json.client_secret });
    expect(updated.status).toBe(200);
    expect(updated.json).toMatchObject({ client_name: 'Renamed', redirect_uris: ['https://printer.example/cb'] });
    // The secret did not change: the client still authenticates with it.
    const secretStillWorks = await fetch(app.url('/token'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(id, registered.json.client_secret as string) },
      body: 'grant_type=refresh_token&refresh_token=lk_rt_unknown',
    });
    expect(((await secretStillWorks.json()) as { error: string }).error).toBe('invalid_grant');

    expect((await call('DELETE', `/register/${id}`, rat)).status).toBe(204);
    expect((await call('GET', `/register/${id}`, rat)).status).toBe(401);
    expect(await app.dataSource.query(`SELECT id FROM clients WHERE id = '${id}'`)).toEqual([]);
  });

  it('PATCH /register/{client_id} is not a method RFC 7592 defines: 405 with Allow naming the ones it does, and nothing changes', async () => {
    const registered = await call('POST', '/register', adminToken, metadata);
    const id = registered.json.client_id as string;
    const rat = registered.json.registration_access_token as string;
    const before = await app.dataSource.query(`SELECT * FROM clients WHERE id = '${id}'`);
    const patched = await call('PATCH', `/register/${id}`, rat, { client_name: 'Patched' });
    expect(patched.status).toBe(405);
    expect(patched.json.error).toBe('method_not_allowed');
    expect(patched.headers.get('allow')?.split(', ').filter((m) => m !== 'HEAD')).toEqual(['GET', 'PUT', 'DELETE']);
    // The same for a client that does not exist: the method is wrong whatever the id.
    expect((await call('PATCH', '/register/no-such-client', rat, {})).status).toBe(405);
    expect(await app.dataSource.query(`SELECT * FROM clients WHERE id = '${id}'`)).toEqual(before);
  });

  it('refuses registration without a token, with a token lacking clients:register, or with a revoked one', async () => {
    const none = await call('POST', '/register', undefined, metadata);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer realm="latchkey"/);

    const reader = await app.createClient({ name: 'rs', redirectUris: [], grantTypes: ['client_credentials'], scope: 'tokens:introspect' });
    const wrongScope = await call('POST', '/register', await clientToken(reader), metadata);
    expect(wrongScope.status).toBe(403);
    expect(wrongScope.json.error).toBe('insufficient_scope');
    expect(wrongScope.headers.get('www-authenticate')).toContain('scope="clients:register"');

    const revoked = await clientToken(admin);
    await fetch(app.url('/revoke'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(admin.clientId, admin.clientSecret!) }, body: `token=${revoked}` });
    expect((await call('POST', '/register', revoked, metadata)).status).toBe(401);
  });

  it.each([
    ['an http redirect URI off loopback', { redirect_uris: ['http://printer.example/cb'] }, 'invalid_redirect_uri'],
    ['a redirect URI with a fragment', { redirect_uris: ['https://printer.example/cb#x'] }, 'invalid_redirect_uri'],
    ['a relative redirect URI', { redirect_uris: ['/cb'] }, 'invalid_redirect_uri'],
    ['a javascript: redirect URI', { redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri'],
    ['the code grant without redirect URIs', { redirect_uris: [] }, 'invalid_redirect_uri'],
    ['the token response type without the implicit grant', { response_types: ['code', 'token'] }, 'invalid_client_metadata'],
    ['response_types without the code grant', { grant_types: ['client_credentials'], response_types: ['code'], redirect_uris: [] }, 'invalid_client_metadata'],
    ['an unsupported auth method', { token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata'],
    ['a public client_credentials client', { grant_types: ['client_credentials'], redirect_uris: [], token_endpoint_auth_method: 'none' }, 'invalid_client_metadata'],
    ['an unknown scope', { scope: 'admin' }, 'invalid_client_metadata'],
    ['a name of the wrong type', { client_name: 42 }, 'invalid_client_metadata'],
    ['redirect_uris that are not an array', { redirect_uris: 'https://printer.example/cb' }, 'invalid_client_metadata'],
    ['a NUL in the name', { client_name: 'a\u0000b' }, 'invalid_client_metadata'],
  ])('refuses %s (RFC 7591 §3.2.2) and registers nothing', async (_case, change, error) => {
    const before = (await app.dataSource.query<unknown[]>('SELECT id FROM clients')).length;
    const reply = await call('POST', '/register', adminToken, { ...metadata, ...change });
    expect({ status: reply.status, error: reply.json.error, described: typeof reply.json.error_description }).toEqual({ status: 400, error, described: 'string' });
    expect((await app.dataSource.query<unknown[]>('SELECT id FROM clients')).length).toBe(before);
  });

  it.each([
    ['malformed JSON', '{"client_name":', 400],
    ['a JSON array', '[]', 400],
  ])('answers %s with a JSON 4xx', async (_case, body, status) => {
    const reply = await call('POST', '/register', adminToken, body);
    expect(reply.status).toBe(status);
    expect(reply.json.error).toEqual(expect.any(String));
  });

  it('records registration, update, deletion and revocation in the audit trail, with who did it and no secrets', async () => {
    const registered = await call('POST', '/register', adminToken, metadata);
    const id = registered.json.client_id as string;
    const rat = registered.json.registration_access_token as string;
    await call('PUT', `/register/${id}`, rat, { ...metadata, client_id: id, client_name: 'Audited' });
    await call('DELETE', `/register/${id}`, rat);
    const events = (await app.app.get(AuditService).list(50)).filter((e) => e.subject === `client:${id}`);
    expect(events.map((e) => [e.actor, e.action])).toEqual([
      [`client:${id}`, 'client.deleted'],
      [`client:${id}`, 'client.updated'],
      [`client:${admin.clientId}`, 'client.registered'],
    ]);
    const dump = JSON.stringify(await app.dataSource.query('SELECT * FROM audit_events'));
    expect(dump).not.toContain(registered.json.client_secret as string);
    expect(dump).not.toContain(rat);
    expect(dump).not.toContain(adminToken);
  });

  it('is advertised in the metadata', async () => {
    const document = (await (await fetch(app.url('/.well-known/oauth-authorization-server'))).json()) as Record<string, unknown>;
    expect(document.registration_endpoint).toBe('https://auth.example.test/register');
  });
});
