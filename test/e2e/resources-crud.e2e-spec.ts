import { jest } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { ApiClient, obtainAccessToken, pathOf, takeServerErrors, type ApiResponse } from '../helpers/api-client.js';
import { TestApp, type TestUser } from '../helpers/test-app.js';

/** The public origin the API builds its links on (never the Host header of a request). */
const ISSUER = 'http://latchkey.example.test:8443';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const JSON_TYPE = /^application\/json;\s*charset=utf-8$/i;
const COLLECTION_METHODS = ['GET', 'HEAD', 'OPTIONS', 'POST'];
const ITEM_METHODS = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'PUT'];

interface DeclaredCollection {
  schema: { properties: Record<string, unknown>; required?: string[] };
  writable: string[];
}
const declared = (JSON.parse(readFileSync(new URL('../../config/collections.json', import.meta.url), 'utf8')) as { collections: Record<string, DeclaredCollection> }).collections;

function methodsOf(allow: string | null): string[] {
  return (allow ?? '').split(',').map((m) => m.trim()).filter(Boolean).sort();
}

function expectJsonError(response: ApiResponse, status: number, error?: string): void {
  expect({ status: response.status, contentType: response.headers.get('content-type') }).toEqual({ status, contentType: expect.stringMatching(JSON_TYPE) });
  expect(response.json).toEqual({ error: error ?? expect.stringMatching(/^[a-z_]+$/), error_description: expect.any(String) });
}

/** A request fetch() refuses to send (TRACE is a forbidden method there), over plain node:http. */
function rawRequest(app: TestApp, method: string, path: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(app.url(path), { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end();
  });
}

describe('REST data API: items (spec "Data interface (REST) conventions")', () => {
  let app: TestApp;
  let user: TestUser;
  let api: ApiClient;

  beforeAll(async () => {
    app = await TestApp.start({ ISSUER });
    const client = await app.createClient({ scope: 'notes:read notes:write photos:read photos:write' });
    user = await app.createUser();
    api = new ApiClient(app, await obtainAccessToken(app, client, user, 'notes:read notes:write photos:read photos:write'));
  });
  afterAll(async () => app?.stop());
  afterEach(() => jest.restoreAllMocks());
  afterEach(() => expect(takeServerErrors()).toEqual([]));

  async function createNote(attributes: Record<string, unknown> = { title: 'Buy milk' }): Promise<Record<string, unknown>> {
    const response = await api.post('/api/v1/notes', attributes);
    if (response.status !== 201) throw new Error(`POST /api/v1/notes answered ${response.status}: ${response.text}`);
    return response.json as Record<string, unknown>;
  }

  const itemPath = (item: Record<string, unknown>, collection = 'notes') => `/api/v1/${collection}/${String(item.id)}`;

  describe('POST /api/v1/<collection>', () => {
    it('creates the item: 201, an absolute Location on ISSUER, ETag "v1", id and timestamps, stored for the owner', async () => {
      const response = await api.post('/api/v1/notes', { title: 'Buy milk', body: 'semi-skimmed', done: false, tags: ['home', 'shop'] });
      expect(response.status).toBe(201);
      expect(response.headers.get('content-type')).toMatch(JSON_TYPE);
      const item = response.json as Record<string, unknown>;
      expect(item).toEqual({ id: expect.stringMatching(UUID), title: 'Buy milk', body: 'semi-skimmed', done: false, tags: ['home', 'shop'], createdAt: expect.stringMatching(ISO_8601), updatedAt: expect.stringMatching(ISO_8601) });
      expect(new Date(item.createdAt as string).toISOString()).toBe(item.createdAt);
      expect(item.updatedAt).toBe(item.createdAt);
      expect(response.headers.get('location')).toBe(`${ISSUER}/api/v1/notes/${String(item.id)}`);
      expect(response.headers.get('etag')).toBe('"v1"');
      expect(response.headers.get('last-modified')).toBe(new Date(item.updatedAt as string).toUTCString());

      const row = await app.dataSource.createQueryBuilder().select('items.owner_id', 'ownerId').addSelect('items.collection', 'collection').from('items', 'items').where('items.id = :id', { id: item.id }).getRawOne<{ ownerId: string; collection: string }>();
      const owner = await app.dataSource.createQueryBuilder().select('users.id', 'id').from('users', 'users').where('users.username = :username', { username: user.username }).getRawOne<{ id: string }>();
      expect(row).toEqual({ ownerId: owner!.id, collection: 'notes' });
    });

    it('serves the created item at its Location, exactly as POST returned it', async () => {
      const created = await api.post('/api/v1/notes', { title: 'Call Ann', tags: ['phone'] });
      const response = await api.get(pathOf(created.headers.get('location')!));
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(JSON_TYPE);
      expect(response.headers.get('etag')).toBe('"v1"');
      expect(response.json).toEqual(created.json);
    });

    it('lists the created item in the collection, which is a JSON array', async () => {
      const item = await createNote({ title: 'In the list' });
      const response = await api.get('/api/v1/notes?limit=100');
      expect(response.status).toBe(200);
      expect(Array.isArray(response.json)).toBe(true);
      expect(response.json).toContainEqual(item);
    });

    it.each([
      ['id', { id: '0190b3c4-0000-7000-8000-000000000000' }],
      ['createdAt', { createdAt: '2024-01-01T00:00:00.000Z' }],
      ['updatedAt', { updatedAt: '2024-01-01T00:00:00.000Z' }],
    ])('refuses the server-managed field %s with 400', async (_name, managed) => {
      const before = await app.dataSource.createQueryBuilder().from('items', 'items').getCount();
      expectJsonError(await api.post('/api/v1/notes', { title: 'x', ...managed }), 400, 'invalid_request');
      expect(await app.dataSource.createQueryBuilder().from('items', 'items').getCount()).toBe(before);
    });

    it.each([
      ['an unknown attribute', { title: 'x', colour: 'red' }],
      ['a missing required title', { body: 'no title' }],
      ['an empty title (minLength 1)', { title: '' }],
      ['a string for a boolean', { title: 'x', done: 'yes' }],
      ['a string for an array', { title: 'x', tags: 'work' }],
      ['repeated tags (uniqueItems)', { title: 'x', tags: ['a', 'a'] }],
      ['a number for a string', { title: 42 }],
    ])('refuses %s with 400', async (_case, body) => {
      const response = await api.post('/api/v1/notes', body);
      expectJsonError(response, 400, 'invalid_request');
    });

    it('names the unknown attribute in the error description', async () => {
      const response = await api.post('/api/v1/notes', { title: 'x', colour: 'red' });
      expect((response.json as { error_description: string }).error_description).toContain('colour');
    });

    it.each([
      ['https://photos.example.com/a.jpg'],
      ['http://photos.example.com/b.png?size=large'],
    ])('accepts the absolute http(s) photo URL %s', async (url) => {
      const response = await api.post('/api/v1/photos', { title: 'Beach', url, takenAt: '2024-05-01T10:00:00Z' });
      expect(response.status).toBe(201);
      expect(response.json).toMatchObject({ title: 'Beach', url, takenAt: expect.any(String) });
      // The same instant (a server may normalise the notation of a date-time).
      expect(Date.parse((response.json as { takenAt: string }).takenAt)).toBe(Date.parse('2024-05-01T10:00:00Z'));
      expect(response.headers.get('location')).toBe(`${ISSUER}/api/v1/photos/${String((response.json as { id: string }).id)}`);
    });

    it.each([
      ['a relative reference', { url: '/images/a.jpg' }],
      ['a URI that is not http(s)', { url: 'ftp://photos.example.com/a.jpg' }],
      ['a javascript: URI', { url: 'javascript:alert(1)' }],
      ['not a URI at all', { url: 'a photo' }],
      ['a takenAt that is not a date-time', { takenAt: 'yesterday' }],
      ['a takenAt date without a time', { takenAt: '2024-05-01' }],
      ['a takenAt without a time zone', { takenAt: '2024-05-01T10:00:00' }],
    ])('refuses a photo with %s', async (_case, attributes) => {
      expectJsonError(await api.post('/api/v1/photos', { title: 'Beach', ...attributes }), 400, 'invalid_request');
    });
  });

  describe('GET /api/v1/<collection>/<id>', () => {
    it.each([
      ['a random UUID', '0190b3c4-1234-7000-8000-000000000000'],
      ['an id that is not a UUID', 'not-a-uuid'],
    ])('answers 404 for %s', async (_case, id) => {
      expectJsonError(await api.get(`/api/v1/notes/${id}`), 404, 'not_found');
    });

    it('answers 404 for an item of another collection under this id', async () => {
      const photo = (await api.post('/api/v1/photos', { title: 'Not a note' })).json as Record<string, unknown>;
      expectJsonError(await api.get(itemPath(photo, 'notes')), 404, 'not_found');
    });
  });

  describe('PUT /api/v1/<collection>/<id>: complete replacement', () => {
    it('replaces every attribute: those left out disappear; 200 with the item, ETag "v2", createdAt kept, updatedAt moved', async () => {
      const item = await createNote({ title: 'Old', body: 'old body', done: true, tags: ['a'] });
      const later = new Date(new Date(item.createdAt as string).getTime() + 60_000);
      jest.spyOn(app.clock, 'now').mockReturnValue(later);
      const response = await api.put(itemPath(item), { title: 'New' });
      expect(response.status).toBe(200);
      expect(response.headers.get('etag')).toBe('"v2"');
      expect(response.json).toEqual({ id: item.id, title: 'New', createdAt: item.createdAt, updatedAt: later.toISOString() });
      expect(response.headers.get('last-modified')).toBe(later.toUTCString());
      expect((await api.get(itemPath(item))).json).toEqual(response.json);
    });

    it('refuses a replacement without the required title with 400 and leaves the item alone', async () => {
      const item = await createNote({ title: 'Keep me', done: false });
      expectJsonError(await api.put(itemPath(item), { done: true }), 400, 'invalid_request');
      const after = await api.get(itemPath(item));
      expect(after.json).toEqual(item);
      expect(after.headers.get('etag')).toBe('"v1"');
    });

    it('accepts the server-managed fields echoed back unchanged (GET, modify, PUT)', async () => {
      const item = await createNote({ title: 'Round trip', tags: ['x'] });
      const got = (await api.get(itemPath(item))).json as Record<string, unknown>;
      const response = await api.put(itemPath(item), { ...got, title: 'Round trip, edited' });
      expect(response.status).toBe(200);
      expect(response.json).toMatchObject({ id: item.id, title: 'Round trip, edited', tags: ['x'], createdAt: item.createdAt });
    });

    it.each([
      ['id', '0190b3c4-0000-7000-8000-000000000001'],
      ['createdAt', '2020-01-01T00:00:00.000Z'],
      ['updatedAt', '2020-01-01T00:00:00.000Z'],
    ])('refuses a changed %s with 400', async (field, value) => {
      const item = await createNote({ title: 'Managed' });
      expectJsonError(await api.put(itemPath(item), { ...item, [field]: value }), 400, 'invalid_request');
      expect((await api.get(itemPath(item))).json).toEqual(item);
    });

    it('refuses unknown attributes with 400', async () => {
      const item = await createNote({ title: 'Strict' });
      expectJsonError(await api.put(itemPath(item), { title: 'Strict', priority: 1 }), 400, 'invalid_request');
    });

    it('answers 404 for an item that does not exist (PUT never creates)', async () => {
      expectJsonError(await api.put('/api/v1/notes/0190b3c4-1234-7000-8000-00000000abcd', { title: 'x' }), 404, 'not_found');
    });
  });

  describe('PATCH /api/v1/<collection>/<id>: JSON merge patch (RFC 7396)', () => {
    it.each([['application/merge-patch+json'], ['application/json'], ['application/merge-patch+json; charset=utf-8']])(
      'applies a %s patch: null removes, members replace (arrays whole), others stay; 200 with the complete item',
      async (contentType) => {
        const item = await createNote({ title: 'Patch me', body: 'to be removed', done: false, tags: ['a', 'b'] });
        const response = await api.patch(itemPath(item), { body: null, done: true, tags: ['c'] }, { contentType });
        expect(response.status).toBe(200);
        expect(response.headers.get('etag')).toBe('"v2"');
        expect(response.json).toEqual({ id: item.id, title: 'Patch me', done: true, tags: ['c'], createdAt: item.createdAt, updatedAt: expect.stringMatching(ISO_8601) });
        expect((await api.get(itemPath(item))).json).toEqual(response.json);
      },
    );

    it('treats an empty patch as no change to the attributes', async () => {
      const item = await createNote({ title: 'Unchanged', tags: ['t'] });
      const response = await api.patch(itemPath(item), {});
      expect(response.status).toBe(200);
      expect(response.json).toMatchObject({ title: 'Unchanged', tags: ['t'] });
    });

    it.each([
      ['removes the required title', { title: null }],
      ['adds an unknown attribute', { colour: 'red' }],
      ['sets a wrong type', { done: 'yes' }],
      ['changes the id', { id: '0190b3c4-0000-7000-8000-000000000002' }],
      ['removes createdAt', { createdAt: null }],
      ['changes updatedAt', { updatedAt: '2020-01-01T00:00:00.000Z' }],
    ])('refuses a patch that %s with 400, leaving the item alone', async (_case, patch) => {
      const item = await createNote({ title: 'Guarded', done: false });
      expectJsonError(await api.patch(itemPath(item), patch), 400, 'invalid_request');
      const after = await api.get(itemPath(item));
      expect(after.json).toEqual(item);
      expect(after.headers.get('etag')).toBe('"v1"');
    });

    it('accepts the server-managed fields echoed unchanged in a patch', async () => {
      const item = await createNote({ title: 'Echo' });
      const response = await api.patch(itemPath(item), { id: item.id, createdAt: item.createdAt, title: 'Echoed' });
      expect(response.status).toBe(200);
      expect(response.json).toMatchObject({ id: item.id, title: 'Echoed' });
    });

    it('refuses a patch sent as another media type with 415', async () => {
      const item = await createNote({ title: 'Typed' });
      expectJsonError(await api.patch(itemPath(item), { done: true }, { contentType: 'application/json-patch+json' }), 415, 'unsupported_media_type');
    });
  });

  describe('DELETE /api/v1/<collection>/<id>', () => {
    it('answers 204 with an empty body; the item is gone afterwards (GET, PUT, PATCH, DELETE → 404)', async () => {
      const item = await createNote({ title: 'Delete me' });
      const response = await api.delete(itemPath(item));
      expect(response.status).toBe(204);
      expect(response.text).toBe('');
      expectJsonError(await api.get(itemPath(item)), 404, 'not_found');
      expectJsonError(await api.put(itemPath(item), { title: 'back' }), 404, 'not_found');
      expectJsonError(await api.patch(itemPath(item), { title: 'back' }), 404, 'not_found');
      expectJsonError(await api.delete(itemPath(item)), 404, 'not_found');
      expect((await api.get('/api/v1/notes?limit=100')).json).not.toContainEqual(expect.objectContaining({ id: item.id }));
    });
  });

  describe('HEAD: the headers a GET would send, no body', () => {
    it.each([
      ['an item', true],
      ['the collection', false],
    ])('on %s', async (_case, onItem) => {
      const item = await createNote({ title: 'Headed', tags: ['h'] });
      const path = onItem ? itemPath(item) : '/api/v1/notes';
      const get = await api.get(path);
      const head = await api.head(path);
      expect(get.status).toBe(200);
      expect(head.status).toBe(200);
      expect(head.text).toBe('');
      for (const name of ['content-type', 'content-length', 'etag', 'last-modified']) {
        expect({ name, value: head.headers.get(name) }).toEqual({ name, value: get.headers.get(name) });
        expect({ name, value: get.headers.get(name) }).toEqual({ name, value: expect.any(String) });
      }
      expect(Number(get.headers.get('content-length'))).toBe(Buffer.byteLength(get.text));
    });
  });

  describe('OPTIONS: Allow, and the attributes a client may change with their schema', () => {
    it.each([['notes'], ['photos']])('on the %s collection', async (name) => {
      const response = await api.options(`/api/v1/${name}`);
      expect(response.status).toBe(200);
      expect(methodsOf(response.headers.get('allow'))).toEqual(COLLECTION_METHODS);
      expect(response.headers.get('content-type')).toMatch(JSON_TYPE);
      const collection = declared[name];
      const attributes = Object.fromEntries(collection.writable.map((attribute) => [attribute, collection.schema.properties[attribute]]));
      expect(response.json).toMatchObject({ collection: name, attributes, required: collection.schema.required ?? [] });
      const body = response.json as { attributes: Record<string, unknown>; readOnly: string[] };
      expect(Object.keys(body.attributes).sort()).toEqual([...collection.writable].sort());
      expect(body.readOnly).toEqual(expect.arrayContaining(['id', 'createdAt', 'updatedAt']));
    });

    it('on an item', async () => {
      const item = await createNote({ title: 'Options' });
      const response = await api.options(itemPath(item));
      expect(response.status).toBe(200);
      expect(methodsOf(response.headers.get('allow'))).toEqual(ITEM_METHODS);
      expect(response.json).toMatchObject({ collection: 'notes', attributes: { title: declared.notes.schema.properties.title, tags: declared.notes.schema.properties.tags } });
    });

    it('answers 404 on an item that does not exist', async () => {
      expectJsonError(await api.options('/api/v1/notes/0190b3c4-1234-7000-8000-00000000abce'), 404, 'not_found');
    });
  });

  describe('other methods → 405 with Allow (RFC 9110 §15.5.6)', () => {
    it.each([
      ['DELETE', 'the collection', false, COLLECTION_METHODS],
      ['PUT', 'the collection', false, COLLECTION_METHODS],
      ['PATCH', 'the collection', false, COLLECTION_METHODS],
      ['POST', 'an item', true, ITEM_METHODS],
    ])('%s on %s', async (method, _target, onItem, allowed) => {
      const item = await createNote({ title: '405' });
      const response = await api.request(method, onItem ? itemPath(item) : '/api/v1/notes', { json: { title: 'x' } });
      expectJsonError(response, 405, 'method_not_allowed');
      expect(methodsOf(response.headers.get('allow'))).toEqual(allowed);
    });

    it.each([
      ['the collection', false, COLLECTION_METHODS],
      ['an item', true, ITEM_METHODS],
    ])('TRACE on %s', async (_case, onItem, allowed) => {
      const item = await createNote({ title: 'trace' });
      const response = await rawRequest(app, 'TRACE', onItem ? itemPath(item) : '/api/v1/notes', { authorization: `Bearer ${api.token!}` });
      expect(response.status).toBe(405);
      expect(methodsOf(response.headers.allow as string)).toEqual(allowed);
      expect(JSON.parse(response.body)).toEqual({ error: 'method_not_allowed', error_description: expect.any(String) });
      expect(response.body).not.toContain(api.token!);
    });
  });

  describe('ETag and conditional requests (RFC 9110 §13)', () => {
    it.each([
      ['its ETag', '"v1"'],
      ['its ETag among others', '"v7", "v1"'],
      ['the weak form of its ETag', 'W/"v1"'],
      ['*', '*'],
    ])('GET and HEAD of an item with If-None-Match naming %s → 304, no body', async (_case, ifNoneMatch) => {
      const item = await createNote({ title: 'Cached' });
      for (const method of ['GET', 'HEAD']) {
        const response = await api.request(method, itemPath(item), { headers: { 'if-none-match': ifNoneMatch } });
        expect({ method, status: response.status, body: response.text }).toEqual({ method, status: 304, body: '' });
        expect(response.headers.get('etag')).toBe('"v1"');
      }
    });

    it('GET of an item with a stale If-None-Match → 200 with the new representation', async () => {
      const item = await createNote({ title: 'Stale cache' });
      await api.patch(itemPath(item), { done: true });
      const response = await api.get(itemPath(item), { headers: { 'if-none-match': '"v1"' } });
      expect(response.status).toBe(200);
      expect(response.headers.get('etag')).toBe('"v2"');
      expect(response.json).toMatchObject({ done: true });
    });

    it('GET of the collection with If-None-Match → 304 while unchanged, 200 with another ETag after a change', async () => {
      await createNote({ title: 'Listed' });
      const first = await api.get('/api/v1/notes');
      const etag = first.headers.get('etag')!;
      expect(etag).toEqual(expect.any(String));
      const again = await api.get('/api/v1/notes', { headers: { 'if-none-match': etag } });
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
      const head = await api.head('/api/v1/notes', { headers: { 'if-none-match': etag } });
      expect(head.status).toBe(304);

      const [firstItem] = first.json as Record<string, unknown>[];
      await api.patch(itemPath(firstItem), { title: 'Listed, renamed' });
      const changed = await api.get('/api/v1/notes', { headers: { 'if-none-match': etag } });
      expect(changed.status).toBe(200);
      expect(changed.headers.get('etag')).not.toBe(etag);
    });

    describe.each([
      ['PUT', (api: ApiClient, path: string, headers: Record<string, string>) => api.put(path, { title: 'Replaced' }, { headers })],
      ['PATCH', (api: ApiClient, path: string, headers: Record<string, string>) => api.patch(path, { done: true }, { headers })],
      ['DELETE', (api: ApiClient, path: string, headers: Record<string, string>) => api.delete(path, { headers })],
    ])('%s with If-Match', (method, send) => {
      it('a stale ETag → 412, and nothing changes', async () => {
        const item = await createNote({ title: 'Contended' });
        const current = (await api.patch(itemPath(item), { body: 'another writer' })).json;
        const response = await send(api, itemPath(item), { 'if-match': '"v1"' });
        expectJsonError(response, 412, 'precondition_failed');
        const after = await api.get(itemPath(item));
        expect(after.status).toBe(200);
        expect(after.headers.get('etag')).toBe('"v2"');
        expect(after.json).toEqual(current);
      });

      it('the weak form of the current ETag → 412 (If-Match compares strongly)', async () => {
        const item = await createNote({ title: 'Weak' });
        expectJsonError(await send(api, itemPath(item), { 'if-match': 'W/"v1"' }), 412, 'precondition_failed');
      });

      it('the current ETag → success', async () => {
        const item = await createNote({ title: 'Matched' });
        const response = await send(api, itemPath(item), { 'if-match': '"v1"' });
        if (method === 'DELETE') {
          expect(response.status).toBe(204);
          expect((await api.get(itemPath(item))).status).toBe(404);
        } else {
          expect(response.status).toBe(200);
          expect(response.headers.get('etag')).toBe('"v2"');
          const again = await send(api, itemPath(item), { 'if-match': '"v2"' });
          expect(again.status).toBe(200);
          expect(again.headers.get('etag')).toBe('"v3"');
        }
      });

      it('* → success on an existing item, 404 on a missing one', async () => {
        const item = await createNote({ title: 'Any' });
        expect((await send(api, itemPath(item), { 'if-match': '*' })).status).toBe(method === 'DELETE' ? 204 : 200);
        expect((await send(api, '/api/v1/notes/0190b3c4-1234-7000-8000-00000000abcf', { 'if-match': '*' })).status).toBe(404);
      });
    });
  });
});
