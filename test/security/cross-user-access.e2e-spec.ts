/**
 * Threat: a valid access token is used to reach data of someone other than the person who granted
 * it (RFC 6819 §5.1.5: the resource server must check that the token's grant covers the resource;
 * §4.6: the resource server is the last line of defence). Defences: every query is scoped to the
 * token's user; another user's item answers exactly like a missing one, so its existence does not
 * leak; a client_credentials token (RFC 6749 §4.4) speaks for no person and owns no items.
 */
import { randomUUID } from 'node:crypto';
import { ApiClient, obtainAccessToken, type ApiResponse } from '../helpers/api-client.js';
import { tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient } from '../helpers/test-app.js';

interface Note {
  id: string;
  title: string;
  tags?: string[];
  done?: boolean;
}

const SCOPE = 'notes:read notes:write';

describe('one user\'s token against another user\'s data (RFC 6819 §5.1.5)', () => {
  let app: TestApp;
  let client: RegisteredClient;
  let alice: ApiClient;
  let bob: ApiClient;
  let bobsNotes: Note[];
  let alicesNotes: Note[];

  beforeAll(async () => {
    app = await TestApp.start({ RATE_LIMIT_CLIENT_PER_MINUTE: '0', RATE_LIMIT_API_PER_MINUTE: '0' });
    client = await app.createClient({ scope: SCOPE });
    alice = new ApiClient(app, await obtainAccessToken(app, client, await app.createUser('alice_sec'), SCOPE));
    bob = new ApiClient(app, await obtainAccessToken(app, client, await app.createUser('bob_sec'), SCOPE));
    const create = async (api: ApiClient, note: Omit<Note, 'id'>) => {
      const created = await api.post('/api/v1/notes', note);
      expect(created.status).toBe(201);
      return created.json as Note;
    };
    bobsNotes = [await create(bob, { title: 'bob private', tags: ['shared', 'bob'], done: true }), await create(bob, { title: 'bob second', tags: ['shared'], done: false })];
    alicesNotes = [await create(alice, { title: 'alice own', tags: ['shared'], done: false })];
  });
  afterAll(async () => app?.stop());

  /** Status and body: what a caller learns, with the id it asked for (echoed in the description) blanked out. */
  function seen(response: ApiResponse, id = ''): { status: number; body: unknown } {
    return { status: response.status, body: id === '' || response.json === undefined ? response.json : JSON.parse(response.text.replaceAll(id, '<id>')) };
  }

  const operations: Array<[string, (api: ApiClient, id: string) => Promise<ApiResponse>]> = [
    ['GET', (api, id) => api.get(`/api/v1/notes/${id}`)],
    ['HEAD', (api, id) => api.head(`/api/v1/notes/${id}`)],
    ['PUT', (api, id) => api.put(`/api/v1/notes/${id}`, { title: 'taken over' })],
    ['PATCH', (api, id) => api.patch(`/api/v1/notes/${id}`, { title: 'taken over' })],
    ['PATCH with If-Match', (api, id) => api.patch(`/api/v1/notes/${id}`, { title: 'taken over' }, { headers: { 'if-match': '"v1"' } })],
    ['DELETE', (api, id) => api.delete(`/api/v1/notes/${id}`)],
    ['DELETE with If-Match', (api, id) => api.delete(`/api/v1/notes/${id}`, { headers: { 'if-match': '"v1"' } })],
  ];

  it.each(operations)('%s on another user\'s item answers 404 not_found, exactly like a missing item', async (_method, operation) => {
    const theirId = bobsNotes[0].id;
    const missingId = randomUUID();
    const theirs = await operation(alice, theirId);
    const missing = await operation(alice, missingId);
    expect(theirs.status).toBe(404);
    if (theirs.json !== undefined) expect(theirs.json).toEqual({ error: 'not_found', error_description: expect.any(String) });
    // Same answer for "exists but not yours" and "does not exist": existence does not leak.
    expect(seen(theirs, theirId)).toEqual(seen(missing, missingId));
    expect(theirs.headers.get('etag')).toBeNull();
  });

  it('leaves the other user\'s items untouched after every attempt', async () => {
    for (const note of bobsNotes) {
      const mine = await bob.get(`/api/v1/notes/${note.id}`);
      expect(mine.status).toBe(200);
      expect(mine.json).toEqual(note);
    }
  });

  it.each([
    ['no filter', ''],
    ['a tag both users use', '?tags=shared'],
    ['the other user\'s title', '?title=bob%20private'],
    ['the other user\'s tag', '?tags=bob'],
    ['done=true (only the other user has one)', '?done=true'],
    ['a large limit and a sort', '?limit=100&sort=-createdAt'],
  ])('never lists the other user\'s items, with %s', async (_name, query) => {
    const listed = await alice.get(`/api/v1/notes${query}`);
    expect(listed.status).toBe(200);
    const ids = (listed.json as Note[]).map((note) => note.id);
    for (const note of bobsNotes) expect(ids).not.toContain(note.id);
    expect(ids.every((id) => alicesNotes.some((note) => note.id === id))).toBe(true);
  });

  it('shows the other user their own items through the same client (the filters above do match something)', async () => {
    const listed = await bob.get('/api/v1/notes?tags=bob');
    expect((listed.json as Note[]).map((note) => note.id)).toEqual([bobsNotes[0].id]);
  });

  it('does not follow a page cursor of the other user into their items', async () => {
    const page = await bob.get('/api/v1/notes?limit=1');
    const link = page.headers.get('link');
    expect(link).toMatch(/rel="next"/);
    const cursor = new URL(/<([^>]+)>/.exec(link!)![1]).searchParams.get('cursor')!;
    // A cursor is only a position in the sort order (not a capability): alice gets her own items after it.
    const replayed = await alice.get(`/api/v1/notes?limit=100&cursor=${encodeURIComponent(cursor)}`);
    expect(replayed.status).toBe(200);
    for (const note of bobsNotes) expect((replayed.json as Note[]).map((n) => n.id)).not.toContain(note.id);
  });

  describe('RFC 6749 §4.4: a client_credentials token owns no person\'s data', () => {
    let service: ApiClient;

    beforeAll(async () => {
      const serviceClient = await app.createClient({ grantTypes: ['client_credentials'], scope: SCOPE, redirectUris: [] });
      const issued = await tokenRequest(app, serviceClient, { grant_type: 'client_credentials', scope: SCOPE });
      expect({ status: issued.status, scope: issued.body.scope }).toEqual({ status: 200, scope: SCOPE });
      service = new ApiClient(app, String(issued.body.access_token));
    });

    it.each([
      ['list', (api: ApiClient) => api.get('/api/v1/notes')],
      ['read', (api: ApiClient) => api.get(`/api/v1/notes/${bobsNotes[0].id}`)],
      ['create', (api: ApiClient) => api.post('/api/v1/notes', { title: 'ownerless' })],
      ['replace', (api: ApiClient) => api.put(`/api/v1/notes/${bobsNotes[0].id}`, { title: 'taken over' })],
      ['patch', (api: ApiClient) => api.patch(`/api/v1/notes/${bobsNotes[0].id}`, { title: 'taken over' })],
      ['delete', (api: ApiClient) => api.delete(`/api/v1/notes/${bobsNotes[0].id}`)],
    ])('refuses to %s with 401 invalid_token, even with the notes scopes', async (_name, operation) => {
      const refused = await operation(service);
      expect(seen(refused)).toEqual({ status: 401, body: { error: 'invalid_token', error_description: expect.any(String) } });
      expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
    });

    it('left every item as it was and created none', async () => {
      expect(((await bob.get('/api/v1/notes')).json as Note[]).map((note) => note.title).sort()).toEqual(['bob private', 'bob second']);
      expect(((await alice.get('/api/v1/notes')).json as Note[]).map((note) => note.title)).toEqual(['alice own']);
    });
  });
});
