import fc from 'fast-check';
import { GrantType } from '../../src/common/oauth.constants.js';
import { Browser } from '../helpers/browser.js';
import { authorizeAsUser, authorizeUrl, basicAuth, newPkce, redirectParams, tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';
import { mutatedParamsWire, authorizationHeader, FORM, formContentType, anyJsonWire, badJson, method, paramsWire, repeatedParamsWire, toRawRequest, usesSlot, type FuzzCase, type ParamSpec, type Slots } from './support/arbitraries.js';
import type { RawResponse } from './support/raw-http.js';
import { changedTables, describeCase, expectAlive, expectJsonError, fcParameters, FuzzStats, fuzzRuns, sendChecked, snapshot, writeSummary, type Snapshot } from './support/fuzz-harness.js';

/**
 * Issue 7: property-based fuzzing of POST /token (RFC 6749 §3.2, §4.1.3, §5.2, §6, §4.4).
 * Invariants for every case: an answer below 500, a JSON body with a string `error` on every
 * error, and a database that no rejected request changed, except the one write RFC 6749 §4.1.2
 * asks for: a failed redemption of a real code still burns that code (authorization-code.grant.ts).
 */
const SPEC: ParamSpec = {
  // resource (RFC 8707) and the client assertion (RFC 7523) too: repeatable, URIs, JWTs.
  names: ['grant_type', 'code', 'redirect_uri', 'code_verifier', 'refresh_token', 'scope', 'client_id', 'client_secret', 'resource', 'client_assertion_type', 'client_assertion'],
  slots: ['client_id', 'client_secret', 'public_client_id', 'cc_client_id', 'redirect_uri', 'code', 'code_verifier', 'refresh_token', 'access_token'],
  constants: [
    'authorization_code',
    'refresh_token',
    'client_credentials',
    'password',
    'implicit',
    'notes:read',
    'notes:read notes:write',
    'photos:read',
    'clients:register',
    'S256',
    'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
    'https://reports.example.com/api',
    'http://localhost:3000',
    'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
  ],
};

const AUTH_SLOTS = ['basic', 'basic_cc', 'basic_public', 'basic_wrong', 'bearer'];

/** A DPoP header (RFC 9449): mostly absent, else junk, an unsigned JWT, or two of them. */
const dpopHeader: fc.Arbitrary<string | string[] | undefined> = fc.oneof(
  { weight: 8, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }).map((value) => value.replace(/[\r\n\0]/g, '')) },
  { weight: 1, arbitrary: fc.constant('eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6Im5vbmUifQ.eyJqdGkiOiJ4In0.') },
  { weight: 1, arbitrary: fc.constant<string[]>(['a.b.c', 'd.e.f']) },
);

/** Valid requests of each grant and each client authentication method, then mutated. */
const GRANTS: Array<{ form: Record<string, string>; authorization?: string }> = [
  { form: { grant_type: 'authorization_code', code: '{{code}}', redirect_uri: '{{redirect_uri}}', code_verifier: '{{code_verifier}}' }, authorization: '{{basic}}' },
  { form: { grant_type: 'authorization_code', code: '{{code}}', redirect_uri: '{{redirect_uri}}', code_verifier: '{{code_verifier}}', client_id: '{{client_id}}', client_secret: '{{client_secret}}' } },
  { form: { grant_type: 'refresh_token', refresh_token: '{{refresh_token}}', scope: 'notes:read' }, authorization: '{{basic}}' },
  { form: { grant_type: 'refresh_token', refresh_token: '{{refresh_token}}', client_id: '{{client_id}}', client_secret: '{{client_secret}}' } },
  { form: { grant_type: 'client_credentials', scope: 'notes:read' }, authorization: '{{basic_cc}}' },
  { form: { grant_type: 'authorization_code', code: '{{code}}', client_id: '{{public_client_id}}', code_verifier: '{{code_verifier}}' } },
];

const nearlyValidCase: fc.Arbitrary<FuzzCase> = fc
  .constantFrom(...GRANTS)
  .chain((grant) =>
    fc.record({
      body: mutatedParamsWire(grant.form, SPEC),
      authorization: fc.oneof({ weight: 8, arbitrary: fc.constant(grant.authorization) }, { weight: 1, arbitrary: authorizationHeader(AUTH_SLOTS) }),
      contentType: fc.oneof({ weight: 10, arbitrary: fc.constant<string | undefined>(FORM) }, { weight: 1, arbitrary: formContentType }),
      dpop: dpopHeader,
    }),
  )
  .map(({ body, authorization, contentType, dpop }) => ({ method: 'POST', path: '/token', headers: { 'content-type': contentType, authorization, dpop }, body }));

const randomCase: fc.Arbitrary<FuzzCase> = fc
  .record({
    method: method(['POST']),
    contentType: formContentType,
    authorization: authorizationHeader(AUTH_SLOTS),
    body: fc.oneof({ weight: 8, arbitrary: paramsWire(SPEC) }, { weight: 1, arbitrary: anyJsonWire }, { weight: 1, arbitrary: badJson }, { weight: 1, arbitrary: fc.constant(undefined) }),
    query: fc.oneof({ weight: 6, arbitrary: fc.constant('') }, { weight: 1, arbitrary: paramsWire(SPEC, 3).map((q) => `?${q}`) }),
  })
  .map(({ method, contentType, authorization, body, query }) => ({
    method,
    path: `/token${query}`,
    headers: { 'content-type': contentType, authorization },
    body: method === 'GET' || method === 'HEAD' ? undefined : body,
  }));

const tokenCase = fc.oneof(randomCase, nearlyValidCase);

describe('RFC 6749 §3.2 token endpoint under fuzzing (POST /token)', () => {
  let app: TestApp;
  let client: RegisteredClient;
  let publicClient: RegisteredClient;
  let serviceClient: RegisteredClient;
  let user: TestUser;
  const slots: Slots = {};
  const stats = { random: new FuzzStats('token'), repeated: new FuzzStats('token (repeated parameters)') };
  let baseline: Snapshot;

  /** A signed-in browser that has consented: each authorization request answers with a code at once. */
  let browser: Browser;

  async function freshCode(): Promise<{ code: string; verifier: string }> {
    const pkce = newPkce();
    const page = await authorizeAsUser(browser, user, authorizeUrl(client, { scope: 'notes:read', state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256' }));
    const code = redirectParams(page).get('code');
    if (!code) throw new Error(`No code in ${page.location}`);
    return { code, verifier: pkce.verifier };
  }

  /** Replaces the fixtures a case may have spent, so the fuzzer keeps reaching the deep paths. */
  async function renewGrants(spent: { code: boolean; refreshToken: boolean }): Promise<void> {
    if (spent.code) {
      const { code, verifier } = await freshCode();
      Object.assign(slots, { code, code_verifier: verifier });
    }
    if (spent.refreshToken) {
      const { code, verifier } = await freshCode();
      const result = await tokenRequest(app, client, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: verifier });
      Object.assign(slots, { refresh_token: String(result.body.refresh_token), access_token: String(result.body.access_token), bearer: `Bearer ${String(result.body.access_token)}` });
    }
  }

  /** Sends one case and checks every invariant; accepted cases and burned codes renew the fixtures. */
  async function check(fuzzCase: FuzzCase, stat: FuzzStats): Promise<{ response: RawResponse; changed: string[] }> {
    const request = toRawRequest(fuzzCase, slots);
    const response = await sendChecked(app, stat, request);
    if (response.status >= 400) expectJsonError(request, response);
    const after = await snapshot(app.dataSource);
    const changed = changedTables(baseline, after);
    if (response.status >= 400 && changed.length > 0) {
      // RFC 6749 §4.1.2 and the grant's "burn first": a real code presented with a wrong binding dies, and nothing else changes.
      const burnedCode = changed.length === 1 && changed[0] === 'authorization_codes' && after.get('authorization_codes')!.rows === baseline.get('authorization_codes')!.rows && usesSlot(fuzzCase, 'code');
      if (!burnedCode) throw new Error(`A rejected request changed ${changed.join(', ')}:\n${describeCase(request, response)}`);
    }
    if (changed.length > 0) await renewGrants({ code: usesSlot(fuzzCase, 'code'), refreshToken: usesSlot(fuzzCase, 'refresh_token') });
    baseline = changed.length > 0 ? await snapshot(app.dataSource) : after;
    return { response, changed };
  }

  beforeAll(async () => {
    app = await TestApp.start({ RATE_LIMIT_CLIENT_PER_MINUTE: '0', RATE_LIMIT_API_PER_MINUTE: '0' });
    client = await app.createClient();
    publicClient = await app.createClient({ isPublic: true, name: 'Public' });
    serviceClient = await app.createClient({ grantTypes: [GrantType.ClientCredentials], redirectUris: [], scope: 'notes:read', name: 'Service' });
    user = await app.createUser();
    Object.assign(slots, {
      client_id: client.clientId,
      client_secret: client.clientSecret!,
      public_client_id: publicClient.clientId,
      cc_client_id: serviceClient.clientId,
      redirect_uri: client.redirectUri,
      basic: basicAuth(client.clientId, client.clientSecret!),
      basic_cc: basicAuth(serviceClient.clientId, serviceClient.clientSecret!),
      basic_public: basicAuth(publicClient.clientId, ''),
      basic_wrong: basicAuth(client.clientId, `${client.clientSecret!}x`),
    });
    browser = new Browser(app.baseUrl);
    await renewGrants({ code: true, refreshToken: true });
    baseline = await snapshot(app.dataSource);
  });

  afterAll(async () => {
    if (app) writeSummary(app, Object.values(stats));
    await app?.stop();
  });

  it('answers random, malformed and half-valid requests below 500, with a JSON error, writing nothing when it refuses', async () => {
    const numRuns = fuzzRuns(400);
    await fc.assert(
      fc.asyncProperty(tokenCase, async (fuzzCase) => {
        stats.random.numRuns += 1;
        await check(fuzzCase, stats.random);
        if (stats.random.numRuns % 100 === 0) await expectAlive(app);
      }),
      fcParameters(numRuns),
    );
    await expectAlive(app);
    // The generator reaches every outcome, not only the first line of defence.
    expect(Object.keys(stats.random.statuses)).toEqual(expect.arrayContaining(['200', '400', '401', '405', '413']));
    expect(Object.keys(stats.random.errors)).toEqual(expect.arrayContaining(['invalid_request', 'invalid_client', 'invalid_grant', 'unsupported_grant_type']));
  }, 180_000);

  it('refuses every request that repeats a parameter with 400 invalid_request (RFC 6749 §3.2), writing nothing', async () => {
    const grants = {
      authorization_code: { grant_type: 'authorization_code', code: '{{code}}', redirect_uri: '{{redirect_uri}}', code_verifier: '{{code_verifier}}', client_id: '{{client_id}}' },
      refresh_token: { grant_type: 'refresh_token', refresh_token: '{{refresh_token}}', scope: 'notes:read', client_id: '{{client_id}}' },
    };
    const repeatedCase = fc
      .oneof(repeatedParamsWire(grants.authorization_code, SPEC), repeatedParamsWire(grants.refresh_token, SPEC))
      .map(({ repeated, wire }) => ({ repeated, fuzzCase: { method: 'POST', path: '/token', headers: { 'content-type': FORM, authorization: '{{basic}}' }, body: wire } }));
    await fc.assert(
      fc.asyncProperty(repeatedCase, async ({ fuzzCase }) => {
        stats.repeated.numRuns += 1;
        const { response, changed } = await check(fuzzCase, stats.repeated);
        expect({ status: response.status, error: (response.json as { error?: string } | undefined)?.error, changed }).toEqual({ status: 400, error: 'invalid_request', changed: [] });
      }),
      fcParameters(fuzzRuns(100)),
    );
    await expectAlive(app);
  }, 120_000);
});
