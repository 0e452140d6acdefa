import fc from 'fast-check';
import { GrantType } from '../../src/common/oauth.constants.js';
import { tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp } from '../helpers/test-app.js';
import { anyJsonWire, authorizationHeader, badJson, jsonContentType, utf8AsLatin1, valueBytes, toRawRequest, type FuzzCase, type Slots } from './support/arbitraries.js';
import { DatabaseGuard, describeCase, expectAlive, expectJsonError, fcParameters, FuzzStats, fuzzRuns, sendChecked, writeSummary } from './support/fuzz-harness.js';

/**
 * Issue 7: property-based fuzzing of dynamic client registration, POST /register (RFC 7591 §3)
 * and GET/PUT/DELETE /register/{client_id} (RFC 7592 §2): JSON bodies valid, mutated, invalid,
 * truncated, not UTF-8, under any content type and any Authorization. Every answer is below 500,
 * every error is JSON with a string `error`, and a refused request writes nothing (no client, no
 * audit event).
 */
const VALID_METADATA: Record<string, unknown> = {
  client_name: 'Fuzzed app',
  redirect_uris: ['https://app.example/cb'],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  scope: 'notes:read',
  token_endpoint_auth_method: 'client_secret_basic',
};

/** Values a metadata field may be given instead of a valid one. */
const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  valueBytes.map((bytes) => Buffer.from(bytes, 'latin1').toString('utf8')),
  fc.constantFrom('', 'x'.repeat(70_000), ['http://evil.example/cb'], ['javascript:alert(1)'], ['https://a.example/cb#frag'], ['com.example.app:/cb'], ['client_credentials'], ['password'], ['token'], 'none', 'private_key_jwt', 'clients:register tokens:introspect', 'notes:read notes:read', '\u0000', '\ud800', [null], [1, 2], {}),
);

const metadataBody = fc
  .record({
    fields: fc.tuple(...Object.entries(VALID_METADATA).map(([name, value]) => fc.oneof({ weight: 8, arbitrary: fc.constant<[string, unknown] | undefined>([name, value]) }, { weight: 1, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: oddValue.map((odd): [string, unknown] => [name, odd]) }))),
    extra: fc.dictionary(fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom('client_id', 'client_secret', 'registration_access_token', 'client_secret_expires_at', 'jwks', 'constructor')), oddValue, { maxKeys: 2 }),
    withId: fc.boolean(),
  })
  .map(({ fields, extra, withId }) => ({ ...Object.fromEntries(fields.filter((f) => f !== undefined)), ...(withId ? { client_id: '{{registered_id}}' } : {}), ...extra }))
  .map((object) => utf8AsLatin1(JSON.stringify(object)));

const body = fc.oneof({ weight: 8, arbitrary: metadataBody }, { weight: 2, arbitrary: badJson }, { weight: 1, arbitrary: anyJsonWire }, { weight: 1, arbitrary: fc.constant(undefined) });

const registerCase: fc.Arbitrary<FuzzCase> = fc
  .record({
    target: fc.oneof(
      { weight: 5, arbitrary: fc.constant({ method: 'POST', path: '/register', authorization: '{{admin}}' }) },
      { weight: 4, arbitrary: fc.constantFrom('GET', 'PUT', 'PUT', 'PUT', 'DELETE').map((method) => ({ method, path: '/register/{{registered_id}}', authorization: '{{rat}}' })) },
      {
        weight: 2,
        arbitrary: fc.record({
          method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'),
          path: fc.constantFrom('/register', '/register/', '/register/{{registered_id}}', '/register/{{registered_id}}/x', '/register/%FF%FE', '/register/%00', '/register/..%2F..%2Ftoken', `/register/${'a'.repeat(5000)}`, '/register/{{other_id}}', '/register?client_id={{registered_id}}'),
          authorization: fc.constantFrom('{{admin}}', '{{rat}}', '{{other_rat}}', '{{not_admin}}'),
        }),
      },
    ),
    authorization: fc.oneof({ weight: 6, arbitrary: fc.constant<string | string[] | undefined>('keep') }, { weight: 2, arbitrary: authorizationHeader(['admin', 'rat', 'other_rat', 'not_admin']) }),
    contentType: jsonContentType,
    body,
  })
  .map(({ target, authorization, contentType, body }) => ({
    method: target.method,
    path: target.path,
    headers: { authorization: authorization === 'keep' ? target.authorization : authorization, 'content-type': contentType },
    body: target.method === 'GET' || target.method === 'HEAD' || target.method === 'DELETE' ? undefined : body,
  }));

describe('RFC 7591 / RFC 7592 dynamic client registration under fuzzing (/register)', () => {
  let app: TestApp;
  let guard: DatabaseGuard;
  const slots: Slots = {};
  const stats = new FuzzStats('register');

  /** Registers a client over HTTP, as an admin script would, for the management cases. */
  async function registered(): Promise<{ id: string; rat: string }> {
    const response = await fetch(app.url('/register'), { method: 'POST', headers: { authorization: slots.admin, 'content-type': 'application/json' }, body: JSON.stringify(VALID_METADATA) });
    const body = (await response.json()) as { client_id: string; registration_access_token: string };
    expect(response.status).toBe(201);
    return { id: body.client_id, rat: body.registration_access_token };
  }

  async function renewRegistered(): Promise<void> {
    const { id, rat } = await registered();
    Object.assign(slots, { registered_id: id, rat: `Bearer ${rat}` });
    await guard?.rebase();
  }

  beforeAll(async () => {
    app = await TestApp.start({ RATE_LIMIT_CLIENT_PER_MINUTE: '0', RATE_LIMIT_API_PER_MINUTE: '0' });
    const admin = await app.createClient({ grantTypes: [GrantType.ClientCredentials], redirectUris: [], scope: 'clients:register', name: 'Admin' });
    const notAdmin = await app.createClient({ grantTypes: [GrantType.ClientCredentials], redirectUris: [], scope: 'notes:read', name: 'Not admin' });
    const adminToken = await tokenRequest(app, admin, { grant_type: 'client_credentials' });
    const otherToken = await tokenRequest(app, notAdmin, { grant_type: 'client_credentials' });
    Object.assign(slots, { admin: `Bearer ${String(adminToken.body.access_token)}`, not_admin: `Bearer ${String(otherToken.body.access_token)}` });
    const other = await registered();
    Object.assign(slots, { other_id: other.id, other_rat: `Bearer ${other.rat}` });
    await renewRegistered();
    guard = await DatabaseGuard.start(app);
  });

  afterAll(async () => {
    if (app) writeSummary(app, [stats]);
    await app?.stop();
  });

  it('answers every request below 500, errors in JSON with a string error, and writes nothing when it refuses', async () => {
    await fc.assert(
      fc.asyncProperty(registerCase, async (fuzzCase) => {
        stats.numRuns += 1;
        const request = toRawRequest(fuzzCase, slots);
        const response = await sendChecked(app, stats, request);
        if (response.status >= 400) expectJsonError(request, response);
        const changed = await guard.afterCase(response.status >= 400, describeCase(request, response));
        if (response.status < 400 && request.method === 'GET') expect(changed).toEqual([]);
        if (response.status === 204) await renewRegistered();
        if (stats.numRuns % 100 === 0) await expectAlive(app);
      }),
      fcParameters(fuzzRuns(400)),
    );
    await expectAlive(app);
    expect(Object.keys(stats.statuses)).toEqual(expect.arrayContaining(['200', '201', '204', '400', '401', '403', '415']));
    expect(Object.keys(stats.errors)).toEqual(expect.arrayContaining(['invalid_client_metadata', 'invalid_redirect_uri', 'invalid_token', 'insufficient_scope', 'invalid_request']));
  }, 180_000);
});
