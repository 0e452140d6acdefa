import fc from 'fast-check';
import { Browser } from '../helpers/browser.js';
import { authorizeAsUser, authorizeUrl, newPkce, redirectParams } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';
import { authorizationHeader, FORM, formContentType, method, mutatedParamsWire, paramsWire, repeatedParamsWire, toRawRequest, type FuzzCase, type ParamSpec, type Slots } from './support/arbitraries.js';
import { DatabaseGuard, describeCase, expectAlive, fcParameters, FuzzStats, fuzzRuns, isJson, sendChecked, writeSummary } from './support/fuzz-harness.js';
import type { RawRequest, RawResponse } from './support/raw-http.js';

/**
 * Issue 7: property-based fuzzing of GET /authorize (RFC 6749 §3.1, §4.1.1, §4.1.2.1).
 * Every answer is below 500 and has the shape §4.1.2.1 prescribes for an error: an HTML error
 * page naming the error code (unknown client, bad redirect URI: never a redirect) or a redirect
 * to the registered URI carrying `error` in its query. Refused requests write nothing; an
 * accepted one from a signed-in, consenting person issues one code and nothing else.
 */
const SPEC: ParamSpec = {
  names: ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method'],
  slots: ['client_id', 'public_client_id', 'redirect_uri', 'challenge'],
  constants: ['code', 'token', 'code id_token', 'S256', 'plain', 'notes:read', 'notes:read notes:write', 'photos:read', 'clients:register', 'tokens:introspect', 'http://localhost:8080/callback/', 'https://evil.example/cb', 'xyz'],
};

const VALID = { response_type: 'code', client_id: '{{client_id}}', redirect_uri: '{{redirect_uri}}', scope: 'notes:read', state: 'xyz', code_challenge: '{{challenge}}', code_challenge_method: 'S256' };

const authorizeCase: fc.Arbitrary<FuzzCase> = fc
  .record({
    method: method(['GET']),
    query: fc.oneof(paramsWire(SPEC), mutatedParamsWire(VALID, SPEC)),
    cookie: fc.oneof({ weight: 3, arbitrary: fc.constant<string | undefined>('{{session}}') }, { weight: 1, arbitrary: fc.constantFrom<string | undefined>(undefined, 'latchkey_session=garbage', '{{session}}x', '{{session}}; {{session}}') }),
    authorization: fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: authorizationHeader(['bearer']) }),
    contentType: formContentType,
    body: paramsWire(SPEC, 3),
  })
  .map(({ method, query, cookie, authorization, contentType, body }) => ({
    method,
    path: `/authorize?${query}`,
    headers: { cookie, authorization, ...(method === 'GET' || method === 'HEAD' ? {} : { 'content-type': contentType }) },
    body: method === 'GET' || method === 'HEAD' ? undefined : body,
  }));

/** RFC 6749 §4.1.2.1: what an /authorize answer may look like. Returns whether it refused the request, and its error code if it says one. */
function classify(request: RawRequest, response: RawResponse, redirectUri: string): { rejected: boolean; error?: string } {
  const where = describeCase(request, response);
  if (response.status >= 400) {
    if (request.method === 'HEAD') return { rejected: true };
    if (isJson(response)) return { rejected: true, error: (response.json as { error: string }).error };
    const code = /Error code: <code>([^<]+)<\/code>/.exec(response.text)?.[1];
    if (!/^text\/html/.test(String(response.headers['content-type'])) || !code) throw new Error(`An error that is neither an error page nor JSON:\n${where}`);
    return { rejected: true, error: code };
  }
  if (response.status === 302 || response.status === 303) {
    const location = String(response.headers.location ?? '');
    if (location.startsWith('/')) return { rejected: false };
    if (!location.startsWith(`${redirectUri}?`)) throw new Error(`A redirect somewhere other than the registered URI or our own pages:\n${where}`);
    const params = new URL(location).searchParams;
    if (params.has('error')) return { rejected: true, error: params.get('error')! };
    if (!params.get('code')) throw new Error(`A redirect to the client with neither code nor error:\n${where}`);
    return { rejected: false };
  }
  if (response.status === 200 || response.status === 204) return { rejected: false };
  throw new Error(`An unexpected status:\n${where}`);
}

describe('RFC 6749 §4.1.1 authorization endpoint under fuzzing (GET /authorize)', () => {
  let app: TestApp;
  let client: RegisteredClient;
  let user: TestUser;
  let guard: DatabaseGuard;
  const slots: Slots = {};
  const stats = { random: new FuzzStats('authorize'), repeated: new FuzzStats('authorize (repeated parameters)') };

  async function check(fuzzCase: FuzzCase, stat: FuzzStats): Promise<{ rejected: boolean; error?: string }> {
    const request = toRawRequest(fuzzCase, slots);
    const response = await sendChecked(app, stat, request);
    const outcome = classify(request, response, client.redirectUri);
    const changed = await guard.afterCase(outcome.rejected, describeCase(request, response));
    // An accepted request writes one thing at most: the code it issued.
    expect(changed.filter((table) => table !== 'authorization_codes')).toEqual([]);
    return outcome;
  }

  beforeAll(async () => {
    app = await TestApp.start({ RATE_LIMIT_CLIENT_PER_MINUTE: '0', RATE_LIMIT_API_PER_MINUTE: '0' });
    client = await app.createClient();
    const publicClient = await app.createClient({ isPublic: true, name: 'Public' });
    user = await app.createUser();
    // A signed-in person who has consented to notes:read: valid requests go all the way to a code.
    const browser = new Browser(app.baseUrl);
    const pkce = newPkce();
    const page = await authorizeAsUser(browser, user, authorizeUrl(client, { scope: 'notes:read', state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256' }));
    expect(redirectParams(page).get('code')).toEqual(expect.any(String));
    const cookies = browser['cookies'];
    Object.assign(slots, {
      client_id: client.clientId,
      public_client_id: publicClient.clientId,
      redirect_uri: encodeURIComponent(client.redirectUri),
      challenge: pkce.challenge,
      session: [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
      bearer: 'Bearer lk_at_x',
    });
    guard = await DatabaseGuard.start(app);
  });

  afterAll(async () => {
    if (app) writeSummary(app, Object.values(stats));
    await app?.stop();
  });

  it('answers every request below 500 with an error page, an error redirect or the flow, writing nothing when it refuses', async () => {
    const errors: Record<string, number> = {};
    let codes = 0;
    await fc.assert(
      fc.asyncProperty(authorizeCase, async (fuzzCase) => {
        stats.random.numRuns += 1;
        const outcome = await check(fuzzCase, stats.random);
        if (outcome.error) errors[outcome.error] = (errors[outcome.error] ?? 0) + 1;
        if (!outcome.rejected && fuzzCase.method === 'GET') codes += 1;
        if (stats.random.numRuns % 100 === 0) await expectAlive(app);
      }),
      fcParameters(fuzzRuns(500)),
    );
    await expectAlive(app);
    Object.assign(stats.random.errors, errors);
    // The cases reach the page errors, the redirected errors and the issued code.
    expect(Object.keys(errors)).toEqual(expect.arrayContaining(['invalid_client', 'invalid_request', 'unsupported_response_type', 'invalid_scope', 'method_not_allowed']));
    expect(codes).toBeGreaterThan(0);
  }, 180_000);

  it('refuses a repeated parameter with invalid_request (RFC 6749 §3.1), on the page or the redirect, writing nothing', async () => {
    const single = { ...VALID, client_id: '{{client_id}}' };
    const repeatedCase = repeatedParamsWire(single, SPEC).map(({ repeated, wire }) => ({ repeated, fuzzCase: { method: 'GET', path: `/authorize?${wire}`, headers: { cookie: '{{session}}' } } }));
    await fc.assert(
      fc.asyncProperty(repeatedCase, async ({ fuzzCase }) => {
        stats.repeated.numRuns += 1;
        const outcome = await check(fuzzCase, stats.repeated);
        expect(outcome).toEqual({ rejected: true, error: 'invalid_request' });
      }),
      fcParameters(fuzzRuns(150)),
    );
  }, 120_000);

  it('answers a form POST to /authorize (Core §3.1.2.1) with a 303 to the same request as a GET, never a code nor a page', async () => {
    const response = await sendChecked(app, stats.random, toRawRequest({ method: 'POST', path: '/authorize', headers: { 'content-type': FORM }, body: 'response_type=code&client_id={{client_id}}' }, slots));
    expect(response.status).toBe(303);
    const location = new URL(response.headers.location as string, 'http://latchkey.test');
    expect(location.pathname).toBe('/authorize');
    expect([...location.searchParams.keys()]).toEqual(['response_type', 'client_id']);
  });
});
