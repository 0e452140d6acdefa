import fc from 'fast-check';
import { ApiClient, obtainAccessToken } from '../helpers/api-client.js';
import { TestApp } from '../helpers/test-app.js';
import { anyJsonWire, authorizationHeader, badJson, jsonContentType, METHODS, mutatedParamsWire, paramsWire, utf8AsLatin1, valueBytes, toRawRequest, type FuzzCase, type ParamSpec, type Slots } from './support/arbitraries.js';
import { DatabaseGuard, describeCase, expectAlive, expectJsonError, fcParameters, FuzzStats, fuzzRuns, sendChecked, writeSummary } from './support/fuzz-harness.js';

/**
 * Issue 7: property-based fuzzing of the data API, /api/v1/<collection>[/<id>] (RFC 6750 bearer
 * tokens, RFC 7396 merge patch, RFC 9110 conditional requests): every method on every path,
 * query parameters, JSON bodies valid, mutated, invalid, truncated and not UTF-8, any content
 * type and Authorization. Every answer is below 500, every error is JSON with a string `error`,
 * and a refused request writes nothing.
 */
const QUERY: ParamSpec = {
  names: ['limit', 'sort', 'cursor', 'title', 'done', 'tags', 'takenAt', 'access_token'],
  slots: ['item_id', 'token'],
  constants: ['1', '0', '-1', '100', '101', '1e3', 'true', 'false', 'TRUE', 'title', '-title', 'createdAt', '-createdAt', 'id', 'body', '2026-05-01T09:00:00Z', 'not-a-date', 'eyJ4Ijoxfq', 'work'],
};

const VALID_NOTE: Record<string, unknown> = { title: 'Buy milk', body: 'two litres', done: false, tags: ['home'] };

const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  valueBytes.map((bytes) => Buffer.from(bytes, 'latin1').toString('utf8')),
  fc.constantFrom('', 'x'.repeat(20_001), 'x'.repeat(201), [null], [1], { $ne: null }, '\u0000', '\ud800', '2026-13-45T99:00:00Z', 1e308, -0),
);

const itemBody = fc
  .record({
    fields: fc.tuple(...Object.entries(VALID_NOTE).map(([name, value]) => fc.oneof({ weight: 8, arbitrary: fc.constant<[string, unknown] | undefined>([name, value]) }, { weight: 1, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: oddValue.map((odd): [string, unknown] => [name, odd]) }))),
    extra: fc.dictionary(fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('id', 'createdAt', 'updatedAt', 'owner', 'userId', 'constructor')), oddValue, { maxKeys: 2 }),
  })
  .map(({ fields, extra }) => utf8AsLatin1(JSON.stringify({ ...Object.fromEntries(fields.filter((f) => f !== undefined)), ...extra })));

const body = fc.oneof({ weight: 8, arbitrary: itemBody }, { weight: 2, arbitrary: badJson }, { weight: 1, arbitrary: anyJsonWire }, { weight: 1, arbitrary: fc.constant(undefined) });

const path = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('/api/v1/notes', '/api/v1/notes/{{item_id}}', '/api/v1/notes/{{item_id}}', '/api/v1/photos') },
  {
    weight: 2,
    arbitrary: fc.constantFrom('/api/v1/notes/', '/api/v1/notes/{{other_item_id}}', '/api/v1/notes/00000000-0000-0000-0000-000000000000', '/api/v1/notes/not-a-uuid', '/api/v1/notes/%FF%FE', '/api/v1/notes/%00', '/api/v1/notes/{{item_id}}/x', '/api/v1/nope', '/api/v1/', '/api/v2/notes', '/api/v1/%6Eotes', '/api/v1/NOTES', `/api/v1/notes/${'9'.repeat(3000)}`, '/api/v1/notes/..%2F..%2Fhealth%2Flive', '/api/v1/photos/{{item_id}}'),
  },
);

const apiCase: fc.Arbitrary<FuzzCase> = fc
  .record({
    method: fc.oneof({ weight: 3, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH') }, { weight: 2, arbitrary: fc.constantFrom(...METHODS) }),
    path,
    query: fc.oneof({ weight: 4, arbitrary: fc.constant('') }, { weight: 2, arbitrary: paramsWire(QUERY, 4).map((q) => `?${q}`) }, { weight: 1, arbitrary: mutatedParamsWire({ limit: '2', sort: '-title', done: 'false' }, QUERY).map((q) => `?${q}`) }),
    authorization: fc.oneof({ weight: 8, arbitrary: fc.constant<string | string[] | undefined>('{{bearer}}') }, { weight: 1, arbitrary: fc.constant<string | string[] | undefined>('{{read_only}}') }, { weight: 3, arbitrary: authorizationHeader(['bearer', 'read_only', 'refresh']) }),
    contentType: fc.oneof({ weight: 3, arbitrary: jsonContentType }, { weight: 1, arbitrary: fc.constant<string | undefined>('application/merge-patch+json') }),
    accept: fc.oneof({ weight: 6, arbitrary: fc.constant<string | undefined>(undefined) }, { weight: 1, arbitrary: fc.constantFrom<string | undefined>('text/html', 'application/json;q=0', '*/*', 'application/xml, text/*', '') }),
    ifMatch: fc.oneof({ weight: 6, arbitrary: fc.constant<string | undefined>(undefined) }, { weight: 1, arbitrary: fc.constantFrom<string | undefined>('"v1"', '"v999"', '*', 'W/"v1"', 'garbage', '"v1", "v2"', '""') }),
    body,
  })
  .map(({ method, path, query, authorization, contentType, accept, ifMatch, body }) => ({
    method,
    path: path + query,
    headers: { authorization, 'content-type': body === undefined ? undefined : contentType, accept, 'if-match': ifMatch },
    body: method === 'GET' || method === 'HEAD' ? undefined : body,
  }));

describe('RFC 6750 data API under fuzzing (/api/v1)', () => {
  let app: TestApp;
  let api: ApiClient;
  let guard: DatabaseGuard;
  const slots: Slots = {};
  const stats = new FuzzStats('api/v1');

  async function newItem(client: ApiClient): Promise<string> {
    const created = await client.post('/api/v1/notes', VALID_NOTE);
    expect(created.status).toBe(201);
    return (created.json as { id: string }).id;
  }

  beforeAll(async () => {
    app = await TestApp.start({ RATE_LIMIT_CLIENT_PER_MINUTE: '0', RATE_LIMIT_API_PER_MINUTE: '0' });
    const client = await app.createClient({ scope: 'notes:read notes:write photos:read' });
    const user = await app.createUser();
    const other = await app.createUser();
    const token = await obtainAccessToken(app, client, user, 'notes:read notes:write photos:read');
    const readOnly = await obtainAccessToken(app, client, user, 'notes:read');
    const othersToken = await obtainAccessToken(app, client, other, 'notes:read notes:write');
    api = new ApiClient(app, token);
    Object.assign(slots, { token, bearer: `Bearer ${token}`, read_only: `Bearer ${readOnly}`, refresh: 'Bearer lk_rt_x', item_id: await newItem(api), other_item_id: await newItem(new ApiClient(app, othersToken)) });
    guard = await DatabaseGuard.start(app);
  });

  afterAll(async () => {
    if (app) writeSummary(app, [stats]);
    await app?.stop();
  });

  it('answers every request below 500, errors in JSON with a string error, and writes nothing when it refuses', async () => {
    await fc.assert(
      fc.asyncProperty(apiCase, async (fuzzCase) => {
        stats.numRuns += 1;
        const request = toRawRequest(fuzzCase, slots);
        const response = await sendChecked(app, stats, request);
        if (response.status >= 400) expectJsonError(request, response);
        const changed = await guard.afterCase(response.status >= 400, describeCase(request, response));
        if (['GET', 'HEAD', 'OPTIONS'].includes(request.method)) expect(changed).toEqual([]);
        if (response.status === 204 && request.method === 'DELETE') {
          slots.item_id = await newItem(api);
          await guard.rebase();
        }
        if (stats.numRuns % 100 === 0) await expectAlive(app);
      }),
      fcParameters(fuzzRuns(500)),
    );
    await expectAlive(app);
    expect(Object.keys(stats.statuses)).toEqual(expect.arrayContaining(['200', '201', '204', '400', '401', '403', '404', '405', '415']));
  }, 180_000);
});
