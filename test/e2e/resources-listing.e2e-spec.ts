import { ApiClient, nextLink, obtainAccessToken, pathOf, takeServerErrors, type ApiResponse } from '../helpers/api-client.js';
import { TestApp, type RegisteredClient } from '../helpers/test-app.js';

/** The public origin the API builds its links on. */
const ISSUER = 'http://latchkey.example.test';
const SCOPE = 'notes:read notes:write photos:read photos:write';

type Item = Record<string, unknown> & { id: string };

function expectJsonError(response: ApiResponse, status: number, error: string): void {
  expect({ status: response.status, contentType: response.headers.get('content-type') }).toEqual({ status, contentType: expect.stringMatching(/^application\/json/) });
  expect(response.json).toEqual({ error, error_description: expect.any(String) });
}

function ids(items: readonly Item[]): string[] {
  return items.map((item) => item.id);
}

/**
 * The order the API promises: by the attribute (items without it last when ascending, first when
 * descending), then by id in the same direction. Ids are UUIDv7: their text order is creation order.
 */
function sortedLike(items: readonly Item[], attribute: string | undefined, descending: boolean): Item[] {
  const compareValues = (a: unknown, b: unknown): number => {
    if (a === b) return 0;
    if (a === undefined) return 1;
    if (b === undefined) return -1;
    return (a as string | boolean) < (b as string | boolean) ? -1 : 1;
  };
  const ascending = (a: Item, b: Item): number => {
    const byValue = attribute === undefined ? 0 : compareValues(a[attribute], b[attribute]);
    return byValue !== 0 ? byValue : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  };
  return [...items].sort((a, b) => (descending ? -ascending(a, b) : ascending(a, b)));
}

/** Creates items a few at a time (the server still gives each its own id and time). */
async function createAll(api: ApiClient, collection: string, bodies: readonly Record<string, unknown>[]): Promise<Item[]> {
  const created: Item[] = [];
  for (let start = 0; start < bodies.length; start += 8) {
    const responses = await Promise.all(bodies.slice(start, start + 8).map((body) => api.post(`/api/v1/${collection}`, body)));
    for (const response of responses) {
      if (response.status !== 201) throw new Error(`POST answered ${response.status}: ${response.text}`);
      created.push(response.json as Item);
    }
  }
  return created;
}

interface Walk {
  items: Item[];
  pageSizes: number[];
}

/**
 * Follows rel="next" from `path` until there is none. `between` runs after each page (to change
 * the collection while a client pages through it).
 */
async function walk(api: ApiClient, path: string, between?: (page: Item[], listed: Item[]) => Promise<void>): Promise<Walk> {
  const items: Item[] = [];
  const pageSizes: number[] = [];
  let next: string | undefined = path;
  while (next !== undefined) {
    const response = await api.get(next);
    if (response.status !== 200) throw new Error(`GET ${next} answered ${response.status}: ${response.text}`);
    const page = response.json as Item[];
    items.push(...page);
    pageSizes.push(page.length);
    const link = nextLink(response.headers);
    if (link !== undefined) {
      expect(link.startsWith(`${ISSUER}/api/v1/`)).toBe(true);
      next = pathOf(link);
    } else {
      next = undefined;
    }
    if (pageSizes.length > 100) throw new Error('More than 100 pages: the next links do not advance');
    if (next !== undefined && between) await between(page, items);
  }
  return { items, pageSizes };
}

function duplicates(values: readonly string[]): string[] {
  const seen = new Set<string>();
  return values.filter((value) => (seen.has(value) ? true : (seen.add(value), false)));
}

describe('REST data API: listing, filtering, sorting and paging', () => {
  let app: TestApp;
  let client: RegisteredClient;

  /** A user of its own, so that every collection here holds exactly what the test created. */
  async function freshApi(): Promise<ApiClient> {
    return new ApiClient(app, await obtainAccessToken(app, client, await app.createUser(), SCOPE));
  }

  beforeAll(async () => {
    app = await TestApp.start({ ISSUER });
    client = await app.createClient({ scope: SCOPE });
  });
  afterAll(async () => app?.stop());
  afterEach(() => expect(takeServerErrors()).toEqual([]));

  describe('filters: equality on filterable attributes, typed by the schema', () => {
    let api: ApiClient;
    let notes: Item[];
    let photos: Item[];

    beforeAll(async () => {
      api = await freshApi();
      // Created one by one: ids (and so the default order) follow this list.
      notes = [];
      for (const body of [
        { title: 'alpha', done: true, tags: ['work', 'urgent'] },
        { title: 'beta', done: false, tags: ['home'] },
        { title: 'gamma' },
        { title: 'alpha', done: false, tags: ['work'] },
        { title: 'Alpha', done: true, tags: ['workshop'] },
        { title: 'alpha beta', tags: [] },
        { title: "it's", body: 'alpha', done: true },
      ]) {
        notes.push(...(await createAll(api, 'notes', [body])));
      }
      photos = [];
      for (const body of [
        { title: 'sea', takenAt: '2024-05-01T10:00:00Z', url: 'https://example.com/1.jpg' },
        { title: 'hill', takenAt: '2024-05-02T08:30:00Z' },
        { title: 'sea', url: 'https://example.com/3.jpg' },
      ]) {
        photos.push(...(await createAll(api, 'photos', [body])));
      }
    });

    it.each([
      ['done=true', [0, 4, 6]],
      ['done=false', [1, 3]],
      ['tags=work', [0, 3]],
      ['tags=home', [1]],
      ['tags=urgent', [0]],
      ['tags=wor', []],
      ['title=alpha', [0, 3]],
      ['title=Alpha', [4]],
      ['title=alpha%20beta', [5]],
      ['title=it%27s', [6]],
      ['title=alph', []],
      ['title=alpha&done=false', [3]],
      ['title=alpha&tags=urgent', [0]],
      ['done=true&tags=home', []],
      ['', [0, 1, 2, 3, 4, 5, 6]],
    ])('GET /api/v1/notes?%s', async (query, expected) => {
      const response = await api.get(`/api/v1/notes?${query}`);
      expect(response.status).toBe(200);
      expect(response.json).toEqual(expected.map((index) => notes[index]));
    });

    it.each([
      ['title=sea', [0, 2]],
      ['takenAt=2024-05-01T10:00:00Z', [0]],
      ['takenAt=2024-05-02T08%3A30%3A00Z', [1]],
      ['takenAt=2024-05-03T00:00:00Z', []],
      ['title=sea&takenAt=2024-05-01T10:00:00Z', [0]],
    ])('GET /api/v1/photos?%s', async (query, expected) => {
      const response = await api.get(`/api/v1/photos?${query}`);
      expect(response.status).toBe(200);
      expect(response.json).toEqual(expected.map((index) => photos[index]));
    });

    it('matches a takenAt filter by instant: the same time written with another offset', async () => {
      const response = await api.get(`/api/v1/photos?takenAt=${encodeURIComponent('2024-05-01T12:00:00+02:00')}`);
      expect(response.status).toBe(200);
      expect(response.json).toEqual([photos[0]]);
    });

    it.each([
      ['an undeclared attribute', 'notes', 'colour=red'],
      ['a declared attribute that is not filterable', 'notes', 'body=alpha'],
      ['a server-managed field', 'notes', 'id=0190b3c4-0000-7000-8000-000000000000'],
      ['createdAt', 'notes', 'createdAt=2024-01-01T00:00:00.000Z'],
      ['photos.url, not filterable', 'photos', 'url=https%3A%2F%2Fexample.com%2F1.jpg'],
      ['a notes attribute on photos', 'photos', 'done=true'],
      ['a misspelt reserved parameter', 'notes', 'limt=5'],
      ['offset (there is no offset paging)', 'notes', 'offset=10'],
    ])('refuses a filter on %s with 400 (never silently ignored)', async (_case, collection, query) => {
      expectJsonError(await api.get(`/api/v1/${collection}?${query}`), 400, 'invalid_request');
    });

    it.each([
      ['done=maybe'],
      ['done=1'],
      ['done=TRUE'],
      ['done='],
      ['done=true%20'],
    ])('refuses a value of the wrong type: %s → 400', async (query) => {
      expectJsonError(await api.get(`/api/v1/notes?${query}`), 400, 'invalid_request');
    });

    it.each([['takenAt=yesterday'], ['takenAt=2024-05-01'], ['takenAt=12']])('refuses a takenAt filter that is not a date-time: %s → 400', async (query) => {
      expectJsonError(await api.get(`/api/v1/photos?${query}`), 400, 'invalid_request');
    });

    it.each([
      ['title=alpha&title=beta'],
      ['done=true&done=true'],
      ['tags=work&tags=home'],
      ['limit=5&limit=6'],
      ['sort=title&sort=-title'],
      ['cursor=a&cursor=b'],
    ])('refuses a repeated parameter: %s → 400', async (query) => {
      expectJsonError(await api.get(`/api/v1/notes?${query}`), 400, 'invalid_request');
    });

    it('names the filterable attributes when refusing an unknown filter', async () => {
      const response = await api.get('/api/v1/notes?colour=red');
      const description = (response.json as { error_description: string }).error_description;
      for (const name of ['title', 'done', 'tags']) expect(description).toContain(name);
    });
  });

  describe('sort: declared attributes, - for descending, id as the tiebreaker', () => {
    let api: ApiClient;
    let notes: Item[];

    beforeAll(async () => {
      api = await freshApi();
      const titles = ['pear', 'apple', 'fig', 'apple', 'kiwi', 'banana', 'fig', 'apple'];
      notes = await createAll(api, 'notes', titles.map((title, i) => ({ title, ...(i % 3 === 0 ? {} : { done: i % 3 === 1 }) })));
    });

    it.each([
      ['title', 'title', false],
      ['-title', 'title', true],
      ['done', 'done', false],
      ['-done', 'done', true],
      ['id', undefined, false],
      ['-id', undefined, true],
      ['createdAt', undefined, false],
      ['-createdAt', undefined, true],
    ])('sort=%s', async (sort, attribute, descending) => {
      const response = await api.get(`/api/v1/notes?sort=${sort}`);
      expect(response.status).toBe(200);
      expect(ids(response.json as Item[])).toEqual(ids(sortedLike(notes, attribute, descending)));
    });

    it('sort=-createdAt lists the newest first', async () => {
      const listed = (await api.get('/api/v1/notes?sort=-createdAt')).json as Item[];
      const times = listed.map((item) => Date.parse(item.createdAt as string));
      expect(times).toEqual([...times].sort((a, b) => b - a));
      expect(listed[0].id).toBe(ids(sortedLike(notes, undefined, false)).at(-1));
    });

    it.each([
      ['body', 'declared, not sortable'],
      ['tags', 'an array'],
      ['colour', 'undeclared'],
      ['-colour', 'undeclared, descending'],
      ['updatedAt', 'not declared sortable'],
      ['-', 'a lone minus'],
      ['--title', 'a double minus'],
      ['title,done', 'a list'],
      ['+title', 'a plus'],
    ])('refuses sort=%s (%s) with 400', async (sort) => {
      expectJsonError(await api.get(`/api/v1/notes?sort=${encodeURIComponent(sort)}`), 400, 'invalid_request');
    });
  });

  describe('limit, and keyset paging through the Link header (RFC 8288 rel="next")', () => {
    let api: ApiClient;
    let notes: Item[];

    beforeAll(async () => {
      api = await freshApi();
      // 250 notes over HTTP; titles repeat and done is missing on some, so sorts have ties and gaps.
      notes = await createAll(api, 'notes', Array.from({ length: 250 }, (_, i) => ({ title: `t${String(i % 13).padStart(2, '0')}`, ...(i % 5 === 0 ? {} : { done: i % 2 === 0 }), tags: i % 4 === 0 ? ['work'] : [] })));
    });

    it('limit defaults to 20, with a next link', async () => {
      const response = await api.get('/api/v1/notes');
      expect(response.status).toBe(200);
      expect(ids(response.json as Item[])).toEqual(ids(sortedLike(notes, undefined, false).slice(0, 20)));
      expect(nextLink(response.headers)).toEqual(expect.any(String));
    });

    it.each([[1], [7], [100]])('honours limit=%i', async (limit) => {
      const response = await api.get(`/api/v1/notes?limit=${limit}`);
      expect(response.status).toBe(200);
      expect(ids(response.json as Item[])).toEqual(ids(sortedLike(notes, undefined, false).slice(0, limit)));
    });

    it.each([['0'], ['101'], ['abc'], ['-1'], ['1.5'], ['1e2'], [''], ['%2010'], ['0x10'], ['99999999999999999999']])('refuses limit=%s with 400', async (limit) => {
      expectJsonError(await api.get(`/api/v1/notes?limit=${limit}`), 400, 'invalid_request');
    });

    it('limit=100: pages of 100, 100, 50; every item exactly once, in creation order', async () => {
      const { items, pageSizes } = await walk(api, '/api/v1/notes?limit=100');
      expect(pageSizes).toEqual([100, 100, 50]);
      expect(duplicates(ids(items))).toEqual([]);
      expect(ids(items)).toEqual(ids(sortedLike(notes, undefined, false)));
    });

    it('limit=50: five full pages and no empty sixth one', async () => {
      const { items, pageSizes } = await walk(api, '/api/v1/notes?limit=50');
      expect(pageSizes).toEqual([50, 50, 50, 50, 50]);
      expect(ids(items)).toEqual(ids(sortedLike(notes, undefined, false)));
    });

    it('default limit: 13 pages of at most 20', async () => {
      const { items, pageSizes } = await walk(api, '/api/v1/notes');
      expect(pageSizes).toEqual([...Array(12).fill(20), 10]);
      expect(ids(items)).toEqual(ids(sortedLike(notes, undefined, false)));
    });

    it.each([
      ['title', 'title', false, 9],
      ['-title', 'title', true, 9],
      ['done', 'done', false, 7],
      ['-done', 'done', true, 7],
      ['-createdAt', undefined, true, 33],
    ])('sort=%s with a small limit across ties and missing values: every item once, in order', async (sort, attribute, descending, limit) => {
      const { items } = await walk(api, `/api/v1/notes?sort=${sort}&limit=${limit}`);
      expect(duplicates(ids(items))).toEqual([]);
      expect(ids(items)).toEqual(ids(sortedLike(notes, attribute, descending)));
    });

    it('keeps filters, sort and limit in the next link', async () => {
      const response = await api.get('/api/v1/notes?tags=work&sort=-title&limit=4');
      const next = new URL(nextLink(response.headers)!);
      expect(next.origin + next.pathname).toBe(`${ISSUER}/api/v1/notes`);
      expect(next.searchParams.get('tags')).toBe('work');
      expect(next.searchParams.get('sort')).toBe('-title');
      expect(next.searchParams.get('limit')).toBe('4');
      expect(next.searchParams.get('cursor')).toEqual(expect.any(String));

      const { items } = await walk(api, '/api/v1/notes?tags=work&sort=-title&limit=4');
      const expected = sortedLike(notes.filter((note) => (note.tags as string[]).includes('work')), 'title', true);
      expect(ids(items)).toEqual(ids(expected));
    });

    it('refuses a cursor from another sort order with 400', async () => {
      const byTitle = new URL(nextLink((await api.get('/api/v1/notes?sort=title&limit=5')).headers)!);
      const cursor = byTitle.searchParams.get('cursor')!;
      for (const sort of ['-title', 'done', '']) {
        const query = new URLSearchParams({ limit: '5', cursor, ...(sort ? { sort } : {}) });
        expectJsonError(await api.get(`/api/v1/notes?${query}`), 400, 'invalid_request');
      }
      const byDefault = new URL(nextLink((await api.get('/api/v1/notes?limit=5')).headers)!).searchParams.get('cursor')!;
      expectJsonError(await api.get(`/api/v1/notes?sort=title&cursor=${byDefault}`), 400, 'invalid_request');
    });

    it.each([
      ['not base64 JSON', 'garbage'],
      ['empty', ''],
      ['base64 of a number', Buffer.from('42').toString('base64url')],
      ['an array of the wrong length', Buffer.from('["",null]').toString('base64url')],
      ['an id that is not a UUID', Buffer.from('["",null,"1 OR 1=1"]').toString('base64url')],
      ['an object as sort value', Buffer.from('["title",{"a":1},"0190b3c4-0000-7000-8000-000000000000"]').toString('base64url')],
      ['percent signs', '%25%25%25'],
    ])('refuses a garbage cursor (%s) with 400', async (_case, cursor) => {
      expectJsonError(await api.get(`/api/v1/notes?cursor=${cursor}`), 400, 'invalid_request');
    });
  });

  describe('sort=takenAt on photos, some without takenAt', () => {
    let api: ApiClient;
    let photos: Item[];

    beforeAll(async () => {
      api = await freshApi();
      photos = await createAll(api, 'photos', Array.from({ length: 40 }, (_, i) => ({ title: `p${i}`, ...(i % 4 === 0 ? {} : { takenAt: `2024-06-${String(1 + (i % 9)).padStart(2, '0')}T12:00:00Z` }) })));
    });

    it.each([
      ['takenAt', false],
      ['-takenAt', true],
    ])('sort=%s, limit=6: every photo once, in order, those without takenAt last (first when descending)', async (sort, descending) => {
      const { items } = await walk(api, `/api/v1/photos?sort=${sort}&limit=6`);
      expect(duplicates(ids(items))).toEqual([]);
      expect(ids(items)).toEqual(ids(sortedLike(photos, 'takenAt', descending)));
    });
  });

  it('sort=takenAt orders by instant, whatever the offset or precision of each date-time', async () => {
    const api = await freshApi();
    const created = await createAll(api, 'photos', [
      { title: '10:30Z', takenAt: '2024-05-01T09:30:00-01:00' },
      { title: '10:00:00.5Z', takenAt: '2024-05-01T10:00:00.500Z' },
      { title: '10:00Z', takenAt: '2024-05-01T10:00:00Z' },
      { title: '09:00Z', takenAt: '2024-05-01T11:00:00+02:00' },
    ]);
    const titleOf = new Map(created.map((photo) => [photo.id, photo.title]));
    const response = await api.get('/api/v1/photos?sort=takenAt');
    expect((response.json as Item[]).map((photo) => titleOf.get(photo.id))).toEqual(['09:00Z', '10:00Z', '10:00:00.5Z', '10:30Z']);
  });

  describe('paging while the collection changes', () => {
    it.each([
      ['', undefined, false],
      ['sort=title&', 'title', false],
      ['sort=-title&', 'title', true],
      ['sort=-createdAt&', undefined, true],
      ['sort=done&', 'done', false],
    ])('?%slimit=10 with items added between pages: every item that existed is listed once, nothing twice', async (query, attribute, descending) => {
      const api = await freshApi();
      const before = await createAll(api, 'notes', Array.from({ length: 45 }, (_, i) => ({ title: `c${String(i % 10)}`, ...(i % 3 === 0 ? {} : { done: i % 2 === 0 }) })));
      let added = 0;
      const { items } = await walk(api, `/api/v1/notes?${query}limit=10`, async () => {
        // Titles before, among and after those already listed; some with done, some without.
        await createAll(api, 'notes', ['c0', 'c5', 'c9', 'a', 'z'].map((title, i) => ({ title, ...(i % 2 === 0 ? { done: i === 0 } : {}) })));
        added += 5;
      });
      expect(added).toBeGreaterThan(0);
      expect(duplicates(ids(items))).toEqual([]);
      const listed = new Set(ids(items));
      expect(before.filter((note) => !listed.has(note.id))).toEqual([]);
      // The originals keep their relative order.
      const originals = new Set(ids(before));
      expect(ids(items).filter((id) => originals.has(id))).toEqual(ids(sortedLike(before, attribute, descending)));
    });

    it('items deleted between pages do not make others disappear', async () => {
      const api = await freshApi();
      const before = sortedLike(await createAll(api, 'notes', Array.from({ length: 40 }, (_, i) => ({ title: `d${i % 4}` }))), 'title', false);
      const deleted = new Set<string>();
      const { items } = await walk(api, '/api/v1/notes?sort=title&limit=10', async (page, listed) => {
        // Delete the last item listed (the one the cursor points at) and one not listed yet.
        const listedIds = new Set(ids(listed));
        const victims = [page.at(-1)!, before.filter((note) => !listedIds.has(note.id) && !deleted.has(note.id))[3]];
        for (const victim of victims) {
          expect((await api.delete(`/api/v1/notes/${victim.id}`)).status).toBe(204);
          deleted.add(victim.id);
        }
      });
      expect(duplicates(ids(items))).toEqual([]);
      const listed = new Set(ids(items));
      expect(before.filter((note) => !deleted.has(note.id) && !listed.has(note.id))).toEqual([]);
    });
  });
});
