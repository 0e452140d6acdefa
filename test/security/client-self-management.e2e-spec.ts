/**
 * Threat: a registered client widens its own rights through RFC 7592 client management. With its
 * registration access token it PUTs new grant types, scopes or redirect URIs onto its
 * registration, then uses them: a `notes:read` application that gives itself `client_credentials`
 * and `clients:register` becomes an administrator (issue 15).
 * Defence: a client managing itself may change descriptive metadata and narrow what it has, never
 * widen (RFC 7592 §2.2 lets the server refuse values; RFC 7591 §5, RFC 9700 §4.15). Widening is an
 * administrator's: the CLI, or a `clients:register` token of another client, checked by the same
 * rules as the CLI. A refused update changes nothing; an accepted one is audited field by field.
 */
import { AuditService } from '../../src/audit/audit.service.js';
import { Browser, isConsentPage } from '../helpers/browser.js';
import { authorizeUrl, newPkce, tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient } from '../helpers/test-app.js';

interface Reply {
  status: number;
  headers: Headers;
  json: Record<string, unknown>;
}

interface Registered {
  id: string;
  secret: string;
  rat: string;
  body: Record<string, unknown>;
}

const APP_METADATA = {
  client_name: 'Notes Reader',
  redirect_uris: ['https://reader.example/cb', 'https://reader.example/cb2'],
  grant_types: ['authorization_code', 'refresh_token'],
  scope: 'notes:read photos:read',
};

describe('client self-management cannot widen a client (RFC 7592 §2.2, RFC 9700 §4.15)', () => {
  let app: TestApp;
  let admin: RegisteredClient;
  let adminToken: string;

  beforeAll(async () => {
    app = await TestApp.start({ ISSUER: 'https://auth.example.test', RATE_LIMIT_CLIENT_PER_MINUTE: '0' });
    admin = await app.createClient({ name: 'admin', redirectUris: [], grantTypes: ['client_credentials'], scope: 'clients:register' });
    adminToken = await clientCredentialsToken(admin);
  });
  afterAll(async () => app?.stop());

  async function clientCredentialsToken(client: RegisteredClient, scope?: string): Promise<string> {
    const result = await tokenRequest(app, client, { grant_type: 'client_credentials', ...(scope ? { scope } : {}) });
    expect(result.status).toBe(200);
    return result.body.access_token as string;
  }

  async function call(method: string, path: string, token: string, body?: unknown): Promise<Reply> {
    const response = await fetch(app.url(path), {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }

  async function register(metadata: Record<string, unknown> = APP_METADATA): Promise<Registered> {
    const reply = await call('POST', '/register', adminToken, metadata);
    expect(reply.status).toBe(201);
    return { id: reply.json.client_id as string, secret: reply.json.client_secret as string, rat: reply.json.registration_access_token as string, body: reply.json };
  }

  /** The client's row as stored, every column. */
  async function row(id: string): Promise<Record<string, unknown>> {
    const placeholder = app.dataSource.options.type === 'postgres' ? '$1' : '?';
    const rows = await app.dataSource.query<Record<string, unknown>[]>(`SELECT * FROM "clients" WHERE "id" = ${placeholder}`, [id]);
    return rows[0];
  }

  async function auditOf(id: string): Promise<{ actor: string; action: string; details: Record<string, unknown> }[]> {
    return (await app.app.get(AuditService).list(500)).filter((event) => event.subject === `client:${id}`);
  }

  const pkceParams = () => ({ code_challenge: newPkce().challenge, code_challenge_method: 'S256' });
  const update = (client: Registered, change: Record<string, unknown>) => ({ ...APP_METADATA, client_id: client.id, ...change });

  it('refuses the escalation of issue 15: client_credentials with clients:register, added by the client itself', async () => {
    const client = await register();
    const before = await row(client.id);
    const reply = await call('PUT', `/register/${client.id}`, client.rat, update(client, { grant_types: ['authorization_code', 'refresh_token', 'client_credentials'], scope: 'notes:read photos:read clients:register' }));
    expect({ status: reply.status, error: reply.json.error }).toEqual({ status: 400, error: 'invalid_client_metadata' });
    expect(await row(client.id)).toEqual(before);
    // And the right it tried to take is not there: no client_credentials token, no clients:register.
    const attempt = await tokenRequest(app, { clientId: client.id, clientSecret: client.secret, redirectUri: '' }, { grant_type: 'client_credentials', scope: 'clients:register' });
    expect(attempt.status).toBe(400);
    expect(attempt.body.access_token).toBeUndefined();
  });

  it.each([
    ['a data scope it was not registered for', { scope: 'notes:read photos:read photos:write' }, 'scope'],
    ['the clients:register scope', { scope: 'notes:read clients:register' }, 'scope'],
    ['the tokens:introspect scope', { scope: 'tokens:introspect' }, 'scope'],
    ['the client_credentials grant', { grant_types: ['authorization_code', 'client_credentials'] }, 'grant_types'],
    ['the password grant', { grant_types: ['authorization_code', 'refresh_token', 'password'] }, 'grant_types'],
    ['the implicit grant and its response type', { grant_types: ['authorization_code', 'implicit'], response_types: ['code', 'token'] }, 'grant_types'],
    ['a new redirect URI', { redirect_uris: ['https://reader.example/cb', 'https://attacker.example/cb'] }, 'redirect_uris'],
    ['a redirect URI replacing the registered ones', { redirect_uris: ['https://attacker.example/cb'] }, 'redirect_uris'],
    ['another access token type', { access_token_type: 'mac' }, 'access_token_type'],
  ])('refuses a client adding %s to itself, names the field, and changes nothing', async (_case, change, field) => {
    const client = await register();
    const before = await row(client.id);
    const auditBefore = await auditOf(client.id);
    const reply = await call('PUT', `/register/${client.id}`, client.rat, update(client, change));
    expect({ status: reply.status, error: reply.json.error }).toEqual({ status: 400, error: 'invalid_client_metadata' });
    expect(reply.json.error_description).toEqual(expect.stringContaining(field));
    expect(await row(client.id)).toEqual(before);
    expect(await auditOf(client.id)).toEqual(auditBefore);
  });

  describe('backchannel_logout_uri: where the client\'s logout tokens (sub, sid) are sent is an administrator\'s decision (issue 30, finding 4)', () => {
    const BACKCHANNEL = 'https://reader.example/backchannel';
    const withBackchannel = { ...APP_METADATA, backchannel_logout_uri: BACKCHANNEL };

    it.each<[string, Record<string, unknown>, string | undefined]>([
      ['set one where it had none', APP_METADATA, 'https://attacker.example/bc'],
      ['move it to another host', withBackchannel, 'https://attacker.example/bc'],
      ['move it to another path on the host of its own redirect URIs', withBackchannel, 'https://reader.example/elsewhere'],
      ['move it to another port of that host', withBackchannel, 'https://reader.example:8443/backchannel'],
      ['remove it (logout would silently stop reaching the client)', withBackchannel, undefined],
    ])('refuses a client managing itself that tries to %s: 400 invalid_client_metadata naming the field, nothing written', async (_case, registered, next) => {
      const client = await register(registered);
      const before = await row(client.id);
      const auditBefore = await auditOf(client.id);
      const body: Record<string, unknown> = { ...update(client, registered), backchannel_logout_uri: next };
      const reply = await call('PUT', `/register/${client.id}`, client.rat, body);
      expect({ status: reply.status, error: reply.json.error }).toEqual({ status: 400, error: 'invalid_client_metadata' });
      expect(reply.json.error_description).toEqual(expect.stringMatching(/^backchannel_logout_uri .*only an administrator/));
      expect(await row(client.id)).toEqual(before);
      expect(await auditOf(client.id)).toEqual(auditBefore);
      expect((await call('GET', `/register/${client.id}`, client.rat)).json.backchannel_logout_uri).toBe(registered.backchannel_logout_uri);
    });

    it('lets a client keep it while changing its name, and an administrator set, move and remove it (audited under the administrator\'s name)', async () => {
      const client = await register(withBackchannel);
      const kept = await call('PUT', `/register/${client.id}`, client.rat, update(client, { ...withBackchannel, client_name: 'Renamed' }));
      expect(kept.status).toBe(200);
      expect(kept.json).toMatchObject({ client_name: 'Renamed', backchannel_logout_uri: BACKCHANNEL });

      const moved = await call('PUT', `/register/${client.id}`, adminToken, update(client, { client_name: 'Renamed', backchannel_logout_uri: 'https://logout.reader.example/bc' }));
      expect(moved.status).toBe(200);
      expect(moved.json.backchannel_logout_uri).toBe('https://logout.reader.example/bc');
      // With other OpenID metadata in the body: a PUT carrying none keeps the stored OpenID settings (noticed in issue 30, not this finding's).
      const removed = await call('PUT', `/register/${client.id}`, adminToken, update(client, { client_name: 'Renamed', subject_type: 'public' }));
      expect(removed.status).toBe(200);
      expect(removed.json.backchannel_logout_uri).toBeUndefined();
      const [latest] = await auditOf(client.id);
      expect(latest).toMatchObject({ actor: `client:${admin.clientId}`, action: 'client.updated' });
      expect((latest.details.changes as Record<string, { old: unknown; new: unknown }>).backchannel_logout_uri).toEqual({ old: 'https://logout.reader.example/bc' });
    });
  });

  it('lets a client narrow itself and change its descriptive metadata, and audits each field with old and new values', async () => {
    const client = await register();
    const reply = await call(
      'PUT',
      `/register/${client.id}`,
      client.rat,
      update(client, { client_name: 'Notes Reader 2', scope: 'notes:read', grant_types: ['authorization_code'], redirect_uris: ['https://reader.example/cb2'], client_secret: client.secret }),
    );
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ client_name: 'Notes Reader 2', scope: 'notes:read', grant_types: ['authorization_code'], redirect_uris: ['https://reader.example/cb2'] });
    const [event] = await auditOf(client.id);
    expect(event).toMatchObject({
      actor: `client:${client.id}`,
      action: 'client.updated',
      details: {
        changes: {
          client_name: { old: 'Notes Reader', new: 'Notes Reader 2' },
          scope: { old: 'notes:read photos:read', new: 'notes:read' },
          grant_types: { old: ['authorization_code', 'refresh_token'], new: ['authorization_code'] },
          redirect_uris: { old: APP_METADATA.redirect_uris, new: ['https://reader.example/cb2'] },
        },
      },
    });
    // Only what changed is listed, and never a secret.
    expect(Object.keys(event.details.changes as object).sort()).toEqual(['client_name', 'grant_types', 'redirect_uris', 'scope']);
    expect(JSON.stringify(event)).not.toContain(client.secret);
    expect(JSON.stringify(event)).not.toContain(client.rat);
  });

  it('lets a client set and change its logo, home page, policy and terms URLs (RFC 7591 §2), audited, and shows policy and terms on the consent page', async () => {
    const client = await register();
    const urls = { client_uri: 'https://reader.example/', logo_uri: 'https://reader.example/logo.png', policy_uri: 'https://reader.example/privacy', tos_uri: 'https://reader.example/terms' };
    const reply = await call('PUT', `/register/${client.id}`, client.rat, update(client, urls));
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject(urls);
    expect(await row(client.id)).toMatchObject(urls);
    const [event] = await auditOf(client.id);
    expect(event.details.changes).toEqual({
      client_uri: { old: undefined, new: urls.client_uri },
      logo_uri: { old: undefined, new: urls.logo_uri },
      policy_uri: { old: undefined, new: urls.policy_uri },
      tos_uri: { old: undefined, new: urls.tos_uri },
    });
    expect((await call('GET', `/register/${client.id}`, client.rat)).json).toMatchObject(urls);

    const user = await app.createUser();
    const browser = new Browser(app.baseUrl);
    const login = await browser.get(authorizeUrl({ clientId: client.id, redirectUri: APP_METADATA.redirect_uris[0] }, { scope: 'notes:read', state: 's', ...pkceParams() }));
    const signedIn = await browser.submit(login, '/login', { username: user.username, password: user.password });
    const consent = await browser.get(signedIn.location!);
    expect(isConsentPage(consent)).toBe(true);
    expect(consent.body).toContain('href="https://reader.example/privacy"');
    expect(consent.body).toContain('href="https://reader.example/terms"');
  });

  it.each([
    ['policy_uri', 'javascript:alert(1)'],
    ['tos_uri', 'http://reader.example/terms'],
    ['logo_uri', 'data:image/png;base64,AAAA'],
    ['client_uri', 'https:///home'],
    ['client_uri', 'https://reader.example/\nx'],
  ])('refuses %s=%j from the client itself: 400 invalid_client_metadata naming the field, nothing stored', async (field, value) => {
    const client = await register();
    const before = await row(client.id);
    const reply = await call('PUT', `/register/${client.id}`, client.rat, update(client, { [field]: value }));
    expect({ status: reply.status, error: reply.json.error }).toEqual({ status: 400, error: 'invalid_client_metadata' });
    expect(reply.json.error_description).toContain(field);
    expect(await row(client.id)).toEqual(before);
    expect(await auditOf(client.id)).toHaveLength(1); // only the registration
  });

  it('does not let a narrowed client widen back to what it had', async () => {
    const client = await register();
    expect((await call('PUT', `/register/${client.id}`, client.rat, update(client, { scope: 'notes:read' }))).status).toBe(200);
    const before = await row(client.id);
    const reply = await call('PUT', `/register/${client.id}`, client.rat, update(client, { scope: 'notes:read photos:read' }));
    expect({ status: reply.status, error: reply.json.error }).toEqual({ status: 400, error: 'invalid_client_metadata' });
    expect(await row(client.id)).toEqual(before);
  });

  it('lets an administrator (a clients:register token of another client) widen a client, audited under its name', async () => {
    const client = await register();
    const reply = await call('PUT', `/register/${client.id}`, adminToken, update(client, { scope: 'notes:read photos:read photos:write', redirect_uris: ['https://reader.example/cb', 'https://reader.example/new'] }));
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ scope: 'notes:read photos:read photos:write', redirect_uris: ['https://reader.example/cb', 'https://reader.example/new'] });
    const [event] = await auditOf(client.id);
    expect(event).toMatchObject({ actor: `client:${admin.clientId}`, action: 'client.updated', details: { changes: { scope: { old: 'notes:read photos:read', new: 'notes:read photos:read photos:write' } } } });
    // The administrator reads and deletes it too.
    expect((await call('GET', `/register/${client.id}`, adminToken)).json).toMatchObject({ client_id: client.id, scope: 'notes:read photos:read photos:write' });
    expect((await call('DELETE', `/register/${client.id}`, adminToken)).status).toBe(204);
    expect(await row(client.id)).toBeUndefined();
  });

  it.each([
    ['a public client with the password grant', { token_endpoint_auth_method: 'none', grant_types: ['password'], response_types: [], redirect_uris: [] }],
    ['a javascript: redirect URI', { redirect_uris: ['javascript:alert(1)'] }],
    ['a scope that does not exist', { scope: 'admin' }],
    ['the code grant without a redirect URI', { redirect_uris: [] }],
  ])('refuses an administrator turning a CLI-registered client into %s, as the CLI would, and changes nothing', async (_case, change) => {
    const cliClient = await app.createClient({ name: 'From the CLI', redirectUris: ['https://cli.example/cb'], scope: 'notes:read' });
    const before = await row(cliClient.clientId);
    const reply = await call('PUT', `/register/${cliClient.clientId}`, adminToken, { client_name: 'From the CLI', redirect_uris: ['https://cli.example/cb'], scope: 'notes:read', client_id: cliClient.clientId, ...change });
    expect(reply.status).toBe(400);
    expect(['invalid_client_metadata', 'invalid_redirect_uri']).toContain(reply.json.error);
    expect(await row(cliClient.clientId)).toEqual(before);
  });

  it("refuses a client's registration access token on another client, and an administrator's token on its own client", async () => {
    const mine = await register();
    const theirs = await register();
    const before = await row(theirs.id);
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const reply = await call(method, `/register/${theirs.id}`, mine.rat, method === 'PUT' ? update(theirs, { client_name: 'Hijacked' }) : undefined);
      expect({ method, status: reply.status, error: reply.json.error }).toEqual({ method, status: 401, error: 'invalid_token' });
    }
    expect(await row(theirs.id)).toEqual(before);

    const adminBefore = await row(admin.clientId);
    const self = await call('PUT', `/register/${admin.clientId}`, adminToken, { client_id: admin.clientId, client_name: 'admin', redirect_uris: [], grant_types: ['client_credentials'], scope: 'clients:register tokens:introspect' });
    expect(self.status).toBe(401);
    expect(await row(admin.clientId)).toEqual(adminBefore);
  });

  it('refuses a token without clients:register as an administrator, and changes nothing', async () => {
    const reader = await app.createClient({ name: 'rs', redirectUris: [], grantTypes: ['client_credentials'], scope: 'tokens:introspect' });
    const client = await register();
    const before = await row(client.id);
    const reply = await call('PUT', `/register/${client.id}`, await clientCredentialsToken(reader), update(client, { scope: 'notes:read photos:read photos:write' }));
    expect(reply.status).toBe(401);
    expect(await row(client.id)).toEqual(before);
  });
});
