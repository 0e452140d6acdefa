import { jest } from '@jest/globals';
import { AuditService } from '../../src/audit/audit.service.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { basicAuth, obtainCode, tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';

const ACCESS_TTL = 900;

/** client_credentials (RFC 6749 §4.4), revocation (RFC 7009) and introspection (RFC 7662). */
describe('service clients: client credentials, revocation, introspection', () => {
  let app: TestApp;
  let user: TestUser;
  let webApp: RegisteredClient;
  let otherApp: RegisteredClient;
  let resourceServer: RegisteredClient;

  beforeAll(async () => {
    app = await TestApp.start({ ACCESS_TOKEN_TTL_SECONDS: String(ACCESS_TTL) });
    user = await app.createUser();
    webApp = await app.createClient({ name: 'Web', scope: 'notes:read notes:write' });
    otherApp = await app.createClient({ name: 'Other', scope: 'notes:read' });
    resourceServer = await app.createClient({ name: 'RS', redirectUris: [], grantTypes: ['client_credentials'], scope: 'tokens:introspect notes:read' });
  });
  afterAll(async () => app?.stop());
  afterEach(() => jest.restoreAllMocks());

  async function userTokens(client: RegisteredClient = webApp): Promise<{ access: string; refresh: string }> {
    const { code, pkce } = await obtainCode(app, client, user, { scope: 'notes:read' });
    const result = await tokenRequest(app, client, { grant_type: 'authorization_code', code, code_verifier: pkce.verifier, redirect_uri: client.redirectUri });
    return { access: result.body.access_token as string, refresh: result.body.refresh_token as string };
  }

  async function post(path: string, client: RegisteredClient | undefined, form: Record<string, string>) {
    const response = await fetch(app.url(path), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(client?.clientSecret ? { authorization: basicAuth(client.clientId, client.clientSecret) } : {}) },
      body: new URLSearchParams(form).toString(),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, json: (text ? JSON.parse(text) : {}) as Record<string, unknown>, text };
  }

  const apiStatus = async (token: string) => (await fetch(app.url('/api/v1/notes'), { headers: { authorization: `Bearer ${token}` } })).status;

  describe('client_credentials grant', () => {
    it('issues an access token without a refresh token, within the registered scope', async () => {
      const result = await tokenRequest(app, resourceServer, { grant_type: 'client_credentials', scope: 'tokens:introspect' });
      expect(result.status).toBe(200);
      expect(result.headers.get('cache-control')).toBe('no-store');
      expect(result.body).toEqual({ access_token: expect.stringMatching(/^lk_at_/), token_type: 'bearer', expires_in: ACCESS_TTL, scope: 'tokens:introspect' });
      expect((await tokenRequest(app, resourceServer, { grant_type: 'client_credentials', scope: 'notes:write' })).body.error).toBe('invalid_scope');
      expect((await tokenRequest(app, webApp, { grant_type: 'client_credentials' })).body.error).toBe('unauthorized_client');
    });

    it('gives a token with no resource owner, which the data API refuses even with a data scope', async () => {
      const result = await tokenRequest(app, resourceServer, { grant_type: 'client_credentials', scope: 'notes:read' });
      expect(await apiStatus(result.body.access_token as string)).toBe(401);
    });

    it('is never open to public clients, and client scopes are never granted through /authorize', async () => {
      await expect(app.app.get(ClientsService).create({ name: 'p', redirectUris: [], isPublic: true, grantTypes: ['client_credentials'] })).rejects.toThrow(/public client cannot use the client_credentials grant/);
      const mixed = await app.createClient({ name: 'Mixed', scope: 'notes:read tokens:introspect' });
      await expect(obtainCode(app, mixed, user, { scope: 'tokens:introspect' })).rejects.toThrow(/No code/);
      // Without a scope parameter the default is the client's data scopes only.
      const { code, pkce } = await obtainCode(app, mixed, user, { scope: '' });
      const result = await tokenRequest(app, mixed, { grant_type: 'authorization_code', code, code_verifier: pkce.verifier, redirect_uri: mixed.redirectUri });
      expect(result.body.scope).toBe('notes:read');
    });
  });

  describe('revocation (RFC 7009)', () => {
    it('revokes an access token: the data API refuses it at once, the refresh token still works', async () => {
      const tokens = await userTokens();
      expect(await apiStatus(tokens.access)).toBe(200);
      const reply = await post('/revoke', webApp, { token: tokens.access, token_type_hint: 'access_token' });
      expect(reply.status).toBe(200);
      expect(reply.text).toBe('');
      expect(reply.headers.get('cache-control')).toBe('no-store');
      expect(await apiStatus(tokens.access)).toBe(401);
      expect((await tokenRequest(app, webApp, { grant_type: 'refresh_token', refresh_token: tokens.refresh })).status).toBe(200);
    });

    it('revokes a refresh token and the access tokens of its grant', async () => {
      const tokens = await userTokens();
      expect((await post('/revoke', webApp, { token: tokens.refresh, token_type_hint: 'something_else' })).status).toBe(200);
      expect(await apiStatus(tokens.access)).toBe(401);
      expect((await tokenRequest(app, webApp, { grant_type: 'refresh_token', refresh_token: tokens.refresh })).body.error).toBe('invalid_grant');
    });

    it('answers 200 for unknown and already revoked tokens, and for another client\'s token, which it leaves alone', async () => {
      const others = await userTokens(otherApp);
      expect((await post('/revoke', webApp, { token: others.access })).status).toBe(200);
      expect(await apiStatus(others.access)).toBe(200);
      expect((await post('/revoke', webApp, { token: 'lk_at_unknown' })).status).toBe(200);
      expect((await post('/revoke', otherApp, { token: others.access })).status).toBe(200);
      expect((await post('/revoke', otherApp, { token: others.access })).status).toBe(200);
      expect(await apiStatus(others.access)).toBe(401);
    });

    it('records revocations in the audit trail: by the client, and automatic ones with their reason', async () => {
      const tokens = await userTokens();
      await post('/revoke', webApp, { token: tokens.access });
      const reused = await userTokens();
      await tokenRequest(app, webApp, { grant_type: 'refresh_token', refresh_token: reused.refresh });
      await tokenRequest(app, webApp, { grant_type: 'refresh_token', refresh_token: reused.refresh });
      // The client's own events: the person's sign-ins in between are theirs (user.signed_in, issue 48).
      const [newest, previous] = (await app.app.get(AuditService).list(10)).filter((event) => event.actor === `client:${webApp.clientId}`);
      expect(newest).toMatchObject({ actor: `client:${webApp.clientId}`, action: 'token.family_revoked', details: { reason: 'refresh_token_reused', tokens_revoked: expect.any(Number) } });
      expect(previous).toMatchObject({ actor: `client:${webApp.clientId}`, action: 'token.revoked', details: { kind: 'access' } });
    });

    it('needs client authentication and a token parameter', async () => {
      const anonymous = await post('/revoke', undefined, { token: 'lk_at_x' });
      expect(anonymous.status).toBe(401);
      expect(anonymous.json.error).toBe('invalid_client');
      expect(anonymous.headers.get('www-authenticate')).toMatch(/^Basic realm="latchkey"/);
      expect((await post('/revoke', webApp, {})).json).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
      expect((await fetch(app.url('/revoke'))).status).toBe(405);
    });
  });

  describe('introspection (RFC 7662)', () => {
    it('describes an active access token', async () => {
      const tokens = await userTokens();
      const reply = await post('/introspect', resourceServer, { token: tokens.access });
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toBe('application/json;charset=UTF-8');
      expect(reply.headers.get('cache-control')).toBe('no-store');
      const rows = await app.dataSource.query<{ id: string }[]>(`SELECT id FROM users WHERE username = '${user.username}'`);
      expect(reply.json).toEqual({ active: true, scope: 'notes:read', client_id: webApp.clientId, sub: rows[0].id, exp: expect.any(Number), iat: expect.any(Number), token_type: 'bearer', auth_time: expect.any(Number), acr: 'urn:latchkey:acr:pwd' });
      expect((reply.json.exp as number) - (reply.json.iat as number)).toBeGreaterThanOrEqual(ACCESS_TTL - 2);
      expect((reply.json.exp as number) - (reply.json.iat as number)).toBeLessThanOrEqual(ACCESS_TTL + 2);
    });

    it('answers exactly {"active": false} for expired, revoked, rotated, unknown and garbage tokens', async () => {
      const revoked = await userTokens();
      await post('/revoke', webApp, { token: revoked.access });
      const rotated = await userTokens();
      await tokenRequest(app, webApp, { grant_type: 'refresh_token', refresh_token: rotated.refresh });
      for (const token of [revoked.access, rotated.refresh, 'lk_at_unknown', '%%%garbage']) {
        expect((await post('/introspect', resourceServer, { token })).json).toEqual({ active: false });
      }
      const expiring = await userTokens();
      jest.spyOn(app.clock, 'now').mockReturnValue(new Date(Date.now() + (ACCESS_TTL + 5) * 1000));
      expect((await post('/introspect', resourceServer, { token: expiring.access })).json).toEqual({ active: false });
    });

    it('describes a client_credentials token without a subject', async () => {
      const token = (await tokenRequest(app, resourceServer, { grant_type: 'client_credentials', scope: 'notes:read' })).body.access_token as string;
      const reply = await post('/introspect', resourceServer, { token });
      expect(reply.json).toMatchObject({ active: true, client_id: resourceServer.clientId, scope: 'notes:read' });
      expect(reply.json).not.toHaveProperty('sub');
    });

    it('is open only to confidential clients registered with tokens:introspect', async () => {
      const tokens = await userTokens();
      const refused = await post('/introspect', webApp, { token: tokens.access });
      expect(refused.status).toBe(400);
      expect(refused.json.error).toBe('unauthorized_client');
      expect((await post('/introspect', undefined, { token: tokens.access })).status).toBe(401);
      expect((await post('/introspect', resourceServer, {})).json.error).toBe('invalid_request');
    });
  });

  it('advertises both endpoints and their client authentication methods', async () => {
    const metadata = (await (await fetch(app.url('/.well-known/oauth-authorization-server'))).json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({
      revocation_endpoint: `${metadata.issuer as string}/revoke`,
      introspection_endpoint: `${metadata.issuer as string}/introspect`,
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
    });
  });
});
