/**
 * Threat: a redirect URI that is not a URI is registered, then matched or followed in a way its
 * owner did not mean. A CR or LF inside it can split a Location header; a space or tab is read
 * differently by the browser, the client library and us; `https:///cb` has an empty host, which a
 * browser "repairs" to `https://cb/` (issue 15, item 3).
 * Defence: every way of registering (POST /register, an administrator's PUT, a client's own PUT,
 * the CLI) stores only absolute URIs per RFC 3986 with a non-empty host for http(s), no control
 * characters, no whitespace, no userinfo and no fragment; a refused registration writes nothing.
 * The CLI's refusal is covered in test/e2e/cli.e2e-spec.ts.
 */
import { Client } from '../../src/clients/client.entity.js';
import { tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient } from '../helpers/test-app.js';

const NOT_URIS: [string, string][] = [
  ['a CR LF inside (header splitting)', 'https://app.example/cb\r\nSet-Cookie: a=b'],
  ['a lone LF', 'https://app.example/cb\nx'],
  ['a tab', 'https://app.example/\tcb'],
  ['a space in the path', 'https://app.example/c b'],
  ['a trailing space', 'https://app.example/cb '],
  ['an empty host', 'https:///cb'],
  ['an empty host on loopback http', 'http:///cb'],
  ['userinfo before the host', 'https://user@app.example/cb'],
  ['a port out of range', 'https://app.example:70000/cb'],
];

interface Reply {
  status: number;
  json: Record<string, unknown>;
}

describe('registration refuses redirect URIs that are not absolute URIs (RFC 3986 §4.3, RFC 7591 §2)', () => {
  let app: TestApp;
  let adminToken: string;
  let existing: { id: string; rat: string };
  const metadata = { client_name: 'Calendar', redirect_uris: ['https://app.example/cb'], grant_types: ['authorization_code'], scope: 'notes:read' };

  beforeAll(async () => {
    app = await TestApp.start({ RATE_LIMIT_CLIENT_PER_MINUTE: '0' });
    const admin: RegisteredClient = await app.createClient({ name: 'admin', redirectUris: [], grantTypes: ['client_credentials'], scope: 'clients:register' });
    const issued = await tokenRequest(app, admin, { grant_type: 'client_credentials' });
    adminToken = issued.body.access_token as string;
    const created = await call('POST', '/register', adminToken, metadata);
    expect(created.status).toBe(201);
    existing = { id: created.json.client_id as string, rat: created.json.registration_access_token as string };
  });
  afterAll(async () => app?.stop());

  async function call(method: string, path: string, token: string, body: unknown): Promise<Reply> {
    const response = await fetch(app.url(path), { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await response.text();
    return { status: response.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }

  const clientCount = () => app.dataSource.getRepository(Client).count();
  const storedUris = async () => (await app.dataSource.getRepository(Client).findOneByOrFail({ id: existing.id })).redirectUris;

  it('the control: a well-formed URI is registered and stored byte for byte', async () => {
    const reply = await call('POST', '/register', adminToken, { ...metadata, redirect_uris: ['https://app.example/cb?tenant=a%20b'] });
    expect(reply.status).toBe(201);
    const stored = await app.dataSource.getRepository(Client).findOneByOrFail({ id: reply.json.client_id as string });
    expect(stored.redirectUris).toEqual(['https://app.example/cb?tenant=a%20b']);
  });

  it('a NUL byte is refused before the redirect-URI rules see it (the JSON body check refuses NUL in any string) and writes nothing', async () => {
    const before = await clientCount();
    const reply = await call('POST', '/register', adminToken, { ...metadata, redirect_uris: ['https://app.example/cb\u0000'] });
    expect(reply.status).toBe(400);
    expect(reply.json.error).toBe('invalid_client_metadata');
    expect(await clientCount()).toBe(before);
  });

  it.each(NOT_URIS)('POST /register with %s → 400 invalid_redirect_uri, no client written', async (_case, uri) => {
    const before = await clientCount();
    const reply = await call('POST', '/register', adminToken, { ...metadata, redirect_uris: [uri] });
    expect(reply.status).toBe(400);
    expect(reply.json.error).toBe('invalid_redirect_uri');
    expect(typeof reply.json.error_description).toBe('string');
    expect(await clientCount()).toBe(before);
  });

  it.each(NOT_URIS)("an administrator's PUT with %s → 400 invalid_redirect_uri, the stored URIs unchanged", async (_case, uri) => {
    const reply = await call('PUT', `/register/${existing.id}`, adminToken, { ...metadata, client_id: existing.id, redirect_uris: ['https://app.example/cb', uri] });
    expect(reply.status).toBe(400);
    expect(reply.json.error).toBe('invalid_redirect_uri');
    expect(await storedUris()).toEqual(['https://app.example/cb']);
  });

  it.each(NOT_URIS)("the client's own PUT with %s → 400, the stored URIs unchanged", async (_case, uri) => {
    const reply = await call('PUT', `/register/${existing.id}`, existing.rat, { ...metadata, client_id: existing.id, redirect_uris: [uri] });
    expect(reply.status).toBe(400);
    expect(['invalid_redirect_uri', 'invalid_client_metadata']).toContain(reply.json.error);
    expect(await storedUris()).toEqual(['https://app.example/cb']);
  });
});
