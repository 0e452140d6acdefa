import { ApiClient, obtainAccessToken, takeServerErrors, type ApiResponse } from '../helpers/api-client.js';
import { TestApp } from '../helpers/test-app.js';

const SCOPE = 'notes:read notes:write photos:read photos:write';
const BODY_LIMIT = 64 * 1024;

type Item = Record<string, unknown> & { id: string };

/** Every /api error: JSON with exactly `error` (snake_case) and `error_description`, never a 5xx. */
function expectJsonError(response: ApiResponse, status: number, error?: string): void {
  expect({ status: response.status, contentType: response.headers.get('content-type') }).toEqual({ status, contentType: expect.stringMatching(/^application\/json/i) });
  expect(response.json).toEqual({ error: error ?? expect.stringMatching(/^[a-z_]+$/), error_description: expect.any(String) });
}

/** A cursor as the server encodes them (base64url of [sort, value, id]), forged by a client. */
function forgedCursor(sort: string, value: unknown, id = '0190b3c4-0000-7000-8000-000000000000'): string {
  return Buffer.from(JSON.stringify([sort, value, id])).toString('base64url');
}

describe('REST data API: errors (one JSON shape, the right 4xx, never a 5xx)', () => {
  let app: TestApp;
  let api: ApiClient;
  let other: ApiClient;
  let mine: Item[];
  let theirs: Item[];
  /** A fresh note for each test, so that a write wrongly accepted by one test cannot fail the next. */
  let note: Item;

  beforeAll(async () => {
    app = await TestApp.start();
    const client = await app.createClient({ scope: SCOPE });
    api = new ApiClient(app, await obtainAccessToken(app, client, await app.createUser(), SCOPE));
    other = new ApiClient(app, await obtainAccessToken(app, client, await app.createUser(), SCOPE));
    mine = [];
    for (const title of ['plain', "' OR 1=1 --", '%', '_', 'x"y', 'data->>\'x\'']) {
      mine.push((await api.post('/api/v1/notes', { title, tags: ["' OR '1'='1"], done: true })).json as Item);
    }
    // Another owner whose items must never leak through any of the requests below.
    theirs = [];
    for (const title of ['plain', "' OR 1=1 --", 'secret of another owner']) {
      theirs.push((await other.post('/api/v1/notes', { title, tags: ["' OR '1'='1"], done: true })).json as Item);
    }
  });
  beforeEach(async () => {
    note = (await api.post('/api/v1/notes', { title: 'fresh', body: 'untouched', tags: ['t'] })).json as Item;
  });
  afterAll(async () => app?.stop());
  afterEach(() => expect(takeServerErrors()).toEqual([]));

  /** Nothing of the other owner's in a listing. */
  function expectNoneOfTheirs(response: ApiResponse): void {
    const theirIds = new Set(theirs.map((item) => item.id));
    expect((response.json as Item[]).filter((item) => theirIds.has(item.id))).toEqual([]);
  }

  const notePath = () => `/api/v1/notes/${note.id}`;

  /** The item is exactly as created: a refused write changed nothing. */
  async function expectNoteUntouched(): Promise<void> {
    const response = await api.get(notePath());
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBe('"v1"');
    expect(response.json).toEqual(note);
  }

  describe('request bodies', () => {
    it.each([
      ['POST', '/api/v1/notes'],
      ['PUT', 'item'],
      ['PATCH', 'item'],
    ])('malformed JSON in a %s → 400 JSON error', async (method, target) => {
      const path = target === 'item' ? notePath() : target;
      const contentType = method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
      for (const raw of ['{"title": "x"', '{title: "x"}', "{'title': 'x'}", '{"title": "x",}', 'tru', '{"title": "x"} trailing']) {
        expectJsonError(await api.request(method, path, { raw, contentType }), 400, 'invalid_request');
      }
      await expectNoteUntouched();
    });

    it.each([
      ['an array', '[{"title": "x"}]'],
      ['a string', '"x"'],
      ['a number', '42'],
      ['null', 'null'],
      ['true', 'true'],
      ['an empty body', ''],
    ])('a JSON body that is not an object (%s) → 400', async (_case, raw) => {
      for (const [method, path] of [['POST', '/api/v1/notes'], ['PUT', notePath()], ['PATCH', notePath()]]) {
        expectJsonError(await api.request(method, path, { raw, contentType: 'application/json' }), 400, 'invalid_request');
      }
      expectJsonError(await api.request('PATCH', notePath(), { raw, contentType: 'application/merge-patch+json' }), 400, 'invalid_request');
      await expectNoteUntouched();
    });

    it('a body that is not UTF-8 → 400', async () => {
      const raw = Buffer.concat([Buffer.from('{"title": "'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}')]);
      expectJsonError(await api.request('POST', '/api/v1/notes', { raw, contentType: 'application/json' }), 400, 'invalid_request');
      expectJsonError(await api.request('PATCH', notePath(), { raw, contentType: 'application/merge-patch+json' }), 400, 'invalid_request');
      await expectNoteUntouched();
    });

    it.each([
      ['__proto__', '{"title": "x", "__proto__": {"done": true}}'],
      ['constructor.prototype', '{"title": "x", "constructor": {"prototype": {"done": true}}}'],
    ])('a body with %s → 400', async (_case, raw) => {
      expectJsonError(await api.request('POST', '/api/v1/notes', { raw, contentType: 'application/json' }), 400, 'invalid_request');
      expectJsonError(await api.request('PATCH', notePath(), { raw, contentType: 'application/merge-patch+json' }), 400, 'invalid_request');
      await expectNoteUntouched();
    });

    it('deeply nested JSON within the size limit → 400, not a crash', async () => {
      const depth = 10_000;
      const nestedObject = '{"x":'.repeat(depth) + '1' + '}'.repeat(depth);
      const nestedArray = '{"title":' + '['.repeat(depth) + ']'.repeat(depth) + '}';
      for (const raw of [nestedObject, nestedArray]) {
        expect(Buffer.byteLength(raw)).toBeLessThan(BODY_LIMIT);
        expectJsonError(await api.request('POST', '/api/v1/notes', { raw, contentType: 'application/json' }), 400);
        expectJsonError(await api.request('PATCH', notePath(), { raw, contentType: 'application/merge-patch+json' }), 400);
      }
      await expectNoteUntouched();
    });
  });

  describe('media types', () => {
    it.each([
      ['text/plain', 'POST', '/api/v1/notes'],
      ['application/x-www-form-urlencoded', 'POST', '/api/v1/notes'],
      ['multipart/form-data; boundary=x', 'POST', '/api/v1/notes'],
      ['application/xml', 'POST', '/api/v1/notes'],
      ['application/merge-patch+json', 'POST', '/api/v1/notes'],
      ['text/plain', 'PUT', 'item'],
      ['application/merge-patch+json', 'PUT', 'item'],
      ['text/plain', 'PATCH', 'item'],
      ['application/json-patch+json', 'PATCH', 'item'],
    ])('%s on %s %s → 415', async (contentType, method, target) => {
      const path = target === 'item' ? notePath() : target;
      const raw = contentType.startsWith('application/x-www') ? 'title=x' : '{"title": "x"}';
      expectJsonError(await api.request(method, path, { raw, contentType }), 415, 'unsupported_media_type');
      await expectNoteUntouched();
    });

    it.each([
      ['POST', '/api/v1/notes'],
      ['PUT', 'item'],
      ['PATCH', 'item'],
    ])('no Content-Type on %s → 415', async (method, target) => {
      const path = target === 'item' ? notePath() : target;
      expectJsonError(await api.request(method, path, { raw: new TextEncoder().encode('{"title": "x"}') }), 415, 'unsupported_media_type');
      expectJsonError(await api.request(method, path), 415, 'unsupported_media_type');
      await expectNoteUntouched();
    });

    it('application/json with parameters is accepted', async () => {
      const response = await api.request('POST', '/api/v1/notes', { raw: '{"title": "typed"}', contentType: 'Application/JSON; charset=UTF-8' });
      expect(response.status).toBe(201);
      expect(await api.delete(`/api/v1/notes/${(response.json as Item).id}`)).toMatchObject({ status: 204 });
    });

    it.each([
      ['application/json', 'POST', '/api/v1/notes'],
      ['text/plain', 'POST', '/api/v1/notes'],
      ['application/merge-patch+json', 'PATCH', 'item'],
      ['application/json', 'PUT', 'item'],
    ])('a %s body over 64 KiB on %s %s → 413 JSON', async (contentType, method, target) => {
      const path = target === 'item' ? notePath() : target;
      const raw = JSON.stringify({ title: 'big', body: 'x'.repeat(BODY_LIMIT) });
      expectJsonError(await api.request(method, path, { raw, contentType }), 413, 'payload_too_large');
      await expectNoteUntouched();
    });

    it('a body within 64 KiB but over the schema maxLength → 400', async () => {
      expectJsonError(await api.post('/api/v1/notes', { title: 'long', body: 'x'.repeat(20_001) }), 400, 'invalid_request');
      expectJsonError(await api.post('/api/v1/notes', { title: 'x'.repeat(201) }), 400, 'invalid_request');
      expectJsonError(await api.post('/api/v1/photos', { title: 'x', url: `https://example.com/${'a'.repeat(2048)}` }), 400, 'invalid_request');
    });

    it.each([
      ['GET', '/api/v1/notes'],
      ['GET', 'item'],
      ['POST', '/api/v1/notes'],
      ['PUT', 'item'],
      ['PATCH', 'item'],
    ])('Accept: text/html on %s %s → 406', async (method, target) => {
      const path = target === 'item' ? notePath() : target;
      const body = method === 'GET' ? undefined : { title: 'not stored' };
      for (const accept of ['text/html', 'text/html, application/xml;q=0.9', 'application/json;q=0, text/html']) {
        expectJsonError(await api.request(method, path, { json: body, headers: { accept } }), 406, 'not_acceptable');
      }
      await expectNoteUntouched();
      expect(((await api.get('/api/v1/notes?limit=100')).json as Item[]).map((item) => item.title)).not.toContain('not stored');
    });

    it.each([['application/json'], ['*/*'], ['application/*'], ['text/html, application/json;q=0.5'], ['APPLICATION/JSON']])('Accept: %s → 200', async (accept) => {
      expect((await api.get(notePath(), { headers: { accept } })).status).toBe(200);
    });
  });

  describe('text the databases cannot store (PostgreSQL jsonb refuses U+0000 and lone surrogates) → 400', () => {
    it.each([
      ['U+0000 in the title', '{"title": "a\\u0000b"}'],
      ['a lone high surrogate in the title', '{"title": "a\\ud800b"}'],
      ['a lone low surrogate in the title', '{"title": "\\udc00"}'],
      ['U+0000 in a tag', '{"title": "t", "tags": ["\\u0000"]}'],
      ['a lone surrogate in a tag', '{"title": "t", "tags": ["ok", "\\udbff"]}'],
      ['U+0000 in an attribute name', '{"title": "t", "\\u0000": 1}'],
      ['a lone surrogate in an attribute name', '{"title": "t", "\\ud800": 1}'],
    ])('%s', async (_case, raw) => {
      expectJsonError(await api.request('POST', '/api/v1/notes', { raw, contentType: 'application/json' }), 400, 'invalid_request');
      expectJsonError(await api.request('PUT', notePath(), { raw, contentType: 'application/json' }), 400, 'invalid_request');
      expectJsonError(await api.request('PATCH', notePath(), { raw, contentType: 'application/merge-patch+json' }), 400, 'invalid_request');
      await expectNoteUntouched();
    });

    it('a photo URL with U+0000 → 400', async () => {
      expectJsonError(await api.request('POST', '/api/v1/photos', { raw: '{"title": "t", "url": "https://example.com/\\u0000"}', contentType: 'application/json' }), 400, 'invalid_request');
    });

    it.each([['title=%00'], ['title=a%00b'], ['tags=%00'], ['title=%ED%A0%80'], ['tags=%ED%B0%80']])('in a filter value (?%s): 400 or an empty result', async (query) => {
      const response = await api.get(`/api/v1/notes?${query}`);
      if (response.status === 200) expect(response.json).toEqual([]);
      else expectJsonError(response, 400, 'invalid_request');
    });

    it.each([
      ['U+0000', 'title', '\u0000'],
      ['a lone surrogate', 'title', '\ud800'],
      ['U+0000, descending', '-title', 'a\u0000'],
      ['a lone surrogate, on photos takenAt', 'takenAt', '\udfff'],
    ])('in a forged cursor value (%s) → 400', async (_case, sort, value) => {
      const collection = sort.endsWith('takenAt') ? 'photos' : 'notes';
      expectJsonError(await api.get(`/api/v1/${collection}?sort=${sort}&cursor=${forgedCursor(sort, value)}`), 400, 'invalid_request');
    });

    it('valid text outside the BMP is stored and matched exactly', async () => {
      const title = 'emoji 😀 𝄞 and ünïcödé';
      const created = await api.post('/api/v1/notes', { title, tags: ['𝄞'] });
      expect(created.status).toBe(201);
      const id = (created.json as Item).id;
      expect(((await api.get(`/api/v1/notes/${id}`)).json as Item).title).toBe(title);
      expect(ids((await api.get(`/api/v1/notes?title=${encodeURIComponent(title)}`)).json)).toEqual([id]);
      expect(ids((await api.get(`/api/v1/notes?tags=${encodeURIComponent('𝄞')}`)).json)).toEqual([id]);
      expect((await api.delete(`/api/v1/notes/${id}`)).status).toBe(204);
    });
  });

  describe('injection attempts in filters, sorts and cursors', () => {
    it.each([
      ["title=' OR 1=1 --", "' OR 1=1 --"],
      ['title=%', '%'],
      ['title=_', '_'],
      ['title=x"y', 'x"y'],
      ["title=data->>'x'", "data->>'x'"],
    ])('a value is compared as data: ?%s matches only the item with exactly that title', async (query, title) => {
      const [name, value] = [query.slice(0, query.indexOf('=')), query.slice(query.indexOf('=') + 1)];
      const response = await api.get(`/api/v1/notes?${name}=${encodeURIComponent(value)}`);
      expect(response.status).toBe(200);
      expect(response.json).toEqual(mine.filter((item) => item.title === title));
      expect(mine.filter((item) => item.title === title)).toHaveLength(1);
    });

    it.each([
      ["title=' OR '1'='1"],
      ['title=plain\' OR \'1\'=\'1'],
      ["title=') OR 1=1 --"],
      ['title=%22 OR 1=1 --'],
      ['title=1; DROP TABLE items; --'],
      ["tags=work' OR '1'='1"],
      ['tags=%5B%22work%22%5D'],
      ['tags=%7B%7D'],
      ["tags=\"]') OR 1=1 --"],
      ['title=%7B%22%24ne%22%3Anull%7D'],
      ['title=*'],
      ['title=$.title'],
    ])('?%s → an empty result, never another owner\'s data', async (query) => {
      const response = await api.get(`/api/v1/notes?${query}`);
      expect(response.status).toBe(200);
      expect(response.json).toEqual([]);
    });

    it('the tag value that looks like SQL matches the items tagged with exactly that text, and only mine', async () => {
      const response = await api.get(`/api/v1/notes?tags=${encodeURIComponent("' OR '1'='1")}&limit=100`);
      expect(response.status).toBe(200);
      expect((response.json as Item[]).map((item) => item.id).sort()).toEqual(mine.map((item) => item.id).sort());
    });

    it.each([
      ["title')=1"],
      ['title%27)=1'],
      ["data->>'title'=plain"],
      ['data-%3E%3E%27title%27=plain'],
      ['$.title=plain'],
      ['%24.title=plain'],
      ['title.length=5'],
      ['title[0]=p'],
      ['title[]=plain'],
      ['"title"=plain'],
      ['%22title%22=plain'],
      ['title;DROP TABLE items=1'],
      ['title--=1'],
      ['json_extract(data,%27$.title%27)=plain'],
      ['owner_id=x'],
      ['collection=notes'],
      ['data=x'],
      ['version=1'],
      ['__proto__=x'],
      ['constructor=x'],
      ['toString=x'],
      ['hasOwnProperty=x'],
      ['TITLE=plain'],
      ['%00=x'],
      ['=x'],
    ])('a filter name ?%s → 400 unknown filter', async (query) => {
      expectJsonError(await api.get(`/api/v1/notes?${query}`), 400, 'invalid_request');
    });

    it.each([
      ['title;DROP TABLE items'],
      ["data->>'title'"],
      ['title ASC, id'],
      ['(SELECT 1)'],
      ['-title--'],
      ['$.title'],
      ['owner_id'],
      ['__proto__'],
    ])('a sort ?sort=%s → 400', async (sort) => {
      expectJsonError(await api.get(`/api/v1/notes?sort=${encodeURIComponent(sort)}`), 400, 'invalid_request');
    });

    it.each([
      ['a quote in the sort value', 'title', "' OR 1=1 --"],
      ['a number where a string sorts', 'title', 5],
      ['a string where a boolean sorts', 'done', "' OR 1=1 --"],
      ['a boolean where a string sorts', '-title', true],
      ['null', 'title', null],
      ['a huge number', 'title', 1e308],
      ['a date-time sort with SQL', 'takenAt', "2024') OR 1=1 --"],
    ])('a forged but well-formed cursor with %s → 200 with only my items, or 400', async (_case, sort, value) => {
      const collection = sort.endsWith('takenAt') ? 'photos' : 'notes';
      const response = await api.get(`/api/v1/${collection}?sort=${sort}&cursor=${forgedCursor(sort, value)}`);
      if (response.status === 200) {
        expectNoneOfTheirs(response);
      } else {
        expectJsonError(response, 400, 'invalid_request');
      }
    });

    it('a forged cursor naming an id of another owner shows nothing of theirs', async () => {
      const response = await api.get(`/api/v1/notes?cursor=${forgedCursor('', null, theirs[0].id)}&limit=100`);
      expect(response.status).toBe(200);
      expect((response.json as Item[]).length).toBeGreaterThan(0);
      expectNoneOfTheirs(response);
    });

    it('the items table is still there and nobody else\'s items changed', async () => {
      const response = await other.get('/api/v1/notes?limit=100');
      expect(response.status).toBe(200);
      expect((response.json as Item[]).map((item) => item.title).sort()).toEqual(["' OR 1=1 --", 'plain', 'secret of another owner']);
    });
  });

  describe('odd paths and methods: JSON errors, never a 5xx', () => {
    it.each([
      ['GET', '/api/v1/notes/%00'],
      ['GET', '/api/v1/notes/..%2F..%2Ftoken'],
      ['GET', '/api/v1/notes/0190B3C4-0000-7000-8000-000000000000'],
      ['GET', `/api/v1/notes/${'a'.repeat(2000)}`],
      ["GET", "/api/v1/notes/' OR 1=1 --"],
      ['GET', '/api/v1/%00'],
      ['GET', '/api/v1/notes%00'],
      ['GET', '/api/v1/notes/%ZZ'],
      ['GET', '/api/v1/%E0%A4%A'],
      ['DELETE', '/api/v1/notes/%00'],
      ['PATCH', "/api/v1/notes/' OR 1=1 --"],
      ['OPTIONS', '/api/v1/notes/%00'],
      ['GET', '/api/v1/notes?cursor=%ZZ'],
      ['GET', '/api/v1/notes?limit=1&&&&=&'],
    ])('%s %s', async (method, path) => {
      const response = await api.request(method, path.replace(/ /g, '%20').replace(/'/g, '%27'), { json: method === 'PATCH' ? { title: 'x' } : undefined });
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      expectJsonError(response, response.status);
    });
  });
});

function ids(json: unknown): string[] {
  return (json as Item[]).map((item) => item.id);
}
