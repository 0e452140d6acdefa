/**
 * Threat: a client (or a thief holding its refresh token) widens its access at refresh time
 * (RFC 6749 §6: "The requested scope MUST NOT include any scope not originally granted by the
 * resource owner"). Defence: the refresh grant accepts only a subset of the original grant, and
 * the narrowed access token opens only what it names.
 */
import { ApiClient, obtainTokens } from '../helpers/api-client.js';
import { tokenRequest, type TokenResult } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';

describe('scope escalation at refresh (RFC 6749 §6)', () => {
  let app: TestApp;
  let user: TestUser;
  let client: RegisteredClient;

  beforeAll(async () => {
    app = await TestApp.start({ RATE_LIMIT_CLIENT_PER_MINUTE: '0', RATE_LIMIT_API_PER_MINUTE: '0' });
    user = await app.createUser();
    // Registered for more than the user grants below: the client's registration is no licence to widen.
    client = await app.createClient({ scope: 'notes:read notes:write photos:read photos:write' });
  });
  afterAll(async () => app?.stop());

  async function refreshTokenFor(scope: string): Promise<string> {
    const tokens = await obtainTokens(app, client, user, scope);
    expect(tokens.scope).toBe(scope);
    return tokens.refreshToken!;
  }

  function refresh(refreshToken: string, scope?: string): Promise<TokenResult> {
    return tokenRequest(app, client, { grant_type: 'refresh_token', refresh_token: refreshToken, ...(scope === undefined ? {} : { scope }) });
  }

  it.each([
    ['a write scope on top of a read-only grant', 'notes:read', 'notes:read notes:write'],
    ['only a scope never granted', 'notes:read', 'notes:write'],
    ['another collection the client is registered for', 'notes:read notes:write', 'notes:read photos:read'],
    ['a scope no collection defines', 'notes:read', 'notes:read admin'],
    ['a service-only scope', 'notes:read', 'notes:read tokens:introspect'],
  ])('refuses %s with invalid_scope and leaves the refresh token usable', async (_name, granted, requested) => {
    const refreshToken = await refreshTokenFor(granted);
    const refused = await refresh(refreshToken, requested);
    expect({ status: refused.status, error: refused.body.error }).toEqual({ status: 400, error: 'invalid_scope' });
    expect(refused.body.access_token).toBeUndefined();
    // A refused request consumed nothing: the client can still refresh within its grant.
    const allowed = await refresh(refreshToken);
    expect({ status: allowed.status, scope: allowed.body.scope }).toEqual({ status: 200, scope: granted });
  });

  it('issues a narrower scope on request, and the narrowed access token cannot write', async () => {
    const refreshToken = await refreshTokenFor('notes:read notes:write');
    const writer = new ApiClient(app, (await obtainTokens(app, client, user, 'notes:read notes:write')).accessToken);
    const note = await writer.post('/api/v1/notes', { title: 'Kept' });
    expect(note.status).toBe(201);
    const id = (note.json as { id: string }).id;

    const narrowed = await refresh(refreshToken, 'notes:read');
    expect({ status: narrowed.status, scope: narrowed.body.scope }).toEqual({ status: 200, scope: 'notes:read' });
    const reader = new ApiClient(app, String(narrowed.body.access_token));

    expect((await reader.get(`/api/v1/notes/${id}`)).status).toBe(200);
    for (const write of [
      () => reader.post('/api/v1/notes', { title: 'Sneaked in' }),
      () => reader.put(`/api/v1/notes/${id}`, { title: 'Overwritten' }),
      () => reader.patch(`/api/v1/notes/${id}`, { title: 'Patched' }),
      () => reader.delete(`/api/v1/notes/${id}`),
    ]) {
      const refused = await write();
      expect({ status: refused.status, error: (refused.json as { error?: string }).error }).toEqual({ status: 403, error: 'insufficient_scope' });
      expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer .*error="insufficient_scope".*scope="notes:write"/);
    }
    expect((await reader.get(`/api/v1/notes/${id}`)).json).toMatchObject({ title: 'Kept' });
  });

  it('keeps the original grant on the rotated refresh token: narrowing once does not shrink the next refresh (§6)', async () => {
    const refreshToken = await refreshTokenFor('notes:read notes:write');
    const narrowed = await refresh(refreshToken, 'notes:read');
    expect(narrowed.status).toBe(200);
    // The new refresh token carries the original grant, no more: asking for it back works, widening beyond still fails.
    const back = await refresh(String(narrowed.body.refresh_token), 'notes:read notes:write');
    expect({ status: back.status, scope: back.body.scope }).toEqual({ status: 200, scope: 'notes:read notes:write' });
    const wider = await refresh(String(back.body.refresh_token), 'notes:read notes:write photos:read');
    expect({ status: wider.status, error: wider.body.error }).toEqual({ status: 400, error: 'invalid_scope' });
  });
});
