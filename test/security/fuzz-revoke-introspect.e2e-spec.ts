import fc from 'fast-check';
import { GrantType } from '../../src/common/oauth.constants.js';
import { Browser } from '../helpers/browser.js';
import { authorizeAsUser, authorizeUrl, basicAuth, newPkce, redirectParams, tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';
import { authorizationHeader, FORM, formContentType, anyJsonWire, badJson, method, mutatedParamsWire, paramsWire, repeatedParamsWire, toRawRequest, type FuzzCase, type ParamSpec, type Slots } from './support/arbitraries.js';
import { DatabaseGuard, describeCase, expectAlive, expectJsonError, fcParameters, FuzzStats, fuzzRuns, sendChecked, writeSummary } from './support/fuzz-harness.js';

/**
 * Issue 7: property-based fuzzing of POST /revoke (RFC 7009 §2.1, §2.2) and POST /introspect
 * (RFC 7662 §2.1, §2.2). Every answer is below 500 and every error is JSON with a string
 * `error`. Introspection never writes; revocation writes only when it answers 200 (the token
 * and its audit event), and a refused request writes nothing.
 */
const SPEC: ParamSpec = {
  names: ['token', 'token_type_hint', 'client_id', 'client_secret'],
  slots: ['access_token', 'refresh_token', 'service_token', 'client_id', 'public_client_id', 'client_secret'],
  constants: ['access_token', 'refresh_token', 'lk_at_', 'lk_rt_', 'lk_ac_x'],
};
const AUTH_SLOTS = ['basic', 'basic_service', 'basic_wrong', 'basic_public', 'bearer'];

function endpointCase(path: string, valid: Array<{ form: Record<string, string>; authorization?: string }>): fc.Arbitrary<FuzzCase> {
  const random = fc.record({
    method: method(['POST']),
    contentType: formContentType,
    authorization: authorizationHeader(AUTH_SLOTS),
    body: fc.oneof({ weight: 8, arbitrary: paramsWire(SPEC) }, { weight: 1, arbitrary: anyJsonWire }, { weight: 1, arbitrary: badJson }, { weight: 1, arbitrary: fc.constant(undefined) }),
  });
  const nearlyValid = fc.constantFrom(...valid).chain((request) =>
    fc.record({
      method: fc.constant('POST'),
      contentType: fc.oneof({ weight: 10, arbitrary: fc.constant<string | undefined>(FORM) }, { weight: 1, arbitrary: formContentType }),
      authorization: fc.oneof({ weight: 8, arbitrary: fc.constant(request.authorization) }, { weight: 1, arbitrary: authorizationHeader(AUTH_SLOTS) }),
      body: mutatedParamsWire(request.form, SPEC).map((wire): string | undefined => wire),
    }),
  );
  return fc.oneof(random, nearlyValid).map(({ method, contentType, authorization, body }) => ({
    method,
    path,
    headers: { 'content-type': contentType, authorization },
    body: method === 'GET' || method === 'HEAD' ? undefined : body,
  }));
}

describe('RFC 7009 revocation and RFC 7662 introspection under fuzzing (POST /revoke, POST /introspect)', () => {
  let app: TestApp;
  let client: RegisteredClient;
  let service: RegisteredClient;
  let user: TestUser;
  let guard: DatabaseGuard;
  const slots: Slots = {};
  const stats = { revoke: new FuzzStats('revoke'), introspect: new FuzzStats('introspect'), repeated: new FuzzStats('revoke+introspect (repeated parameters)') };

  /** A signed-in browser that has consented: a new grant costs one redirect, not a sign-in. */
  let browser: Browser;

  /** New tokens for the slots, after a case revoked the old ones. */
  async function renewTokens(): Promise<void> {
    const pkce = newPkce();
    const page = await authorizeAsUser(browser, user, authorizeUrl(client, { scope: 'notes:read', code_challenge: pkce.challenge, code_challenge_method: 'S256' }));
    const code = redirectParams(page).get('code')!;
    const tokens = await tokenRequest(app, client, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier });
    const serviceToken = await tokenRequest(app, service, { grant_type: 'client_credentials' });
    const accessToken = String(tokens.body.access_token);
    Object.assign(slots, { access_token: accessToken, refresh_token: String(tokens.body.refresh_token), bearer: `Bearer ${accessToken}`, service_token: String(serviceToken.body.access_token) });
    await guard?.rebase();
  }

  beforeAll(async () => {
    app = await TestApp.start({ RATE_LIMIT_CLIENT_PER_MINUTE: '0', RATE_LIMIT_API_PER_MINUTE: '0' });
    client = await app.createClient();
    const publicClient = await app.createClient({ isPublic: true, name: 'Public' });
    service = await app.createClient({ grantTypes: [GrantType.ClientCredentials], redirectUris: [], scope: 'tokens:introspect notes:read', name: 'Resource server' });
    user = await app.createUser();
    Object.assign(slots, {
      client_id: client.clientId,
      client_secret: client.clientSecret!,
      public_client_id: publicClient.clientId,
      basic: basicAuth(client.clientId, client.clientSecret!),
      basic_service: basicAuth(service.clientId, service.clientSecret!),
      basic_wrong: basicAuth(service.clientId, 'lk_cs_wrong'),
      basic_public: basicAuth(publicClient.clientId, ''),
    });
    browser = new Browser(app.baseUrl);
    await renewTokens();
    guard = await DatabaseGuard.start(app);
  });

  afterAll(async () => {
    if (app) writeSummary(app, Object.values(stats));
    await app?.stop();
  });

  it('POST /revoke: every answer below 500, errors in JSON, and a database changed only by a 200', async () => {
    const revokeCase = endpointCase('/revoke', [
      { form: { token: '{{access_token}}', token_type_hint: 'access_token' }, authorization: '{{basic}}' },
      { form: { token: '{{refresh_token}}', token_type_hint: 'refresh_token' }, authorization: '{{basic}}' },
      { form: { token: '{{refresh_token}}', client_id: '{{client_id}}', client_secret: '{{client_secret}}' } },
      { form: { token: '{{service_token}}' }, authorization: '{{basic_service}}' },
    ]);
    await fc.assert(
      fc.asyncProperty(revokeCase, async (fuzzCase) => {
        stats.revoke.numRuns += 1;
        const request = toRawRequest(fuzzCase, slots);
        const response = await sendChecked(app, stats.revoke, request);
        if (response.status >= 400) expectJsonError(request, response);
        const changed = await guard.afterCase(response.status >= 400, describeCase(request, response));
        // RFC 7009 §2.2: a revocation answers 200 with an empty body, whether or not the token was the caller's.
        if (response.status === 200) expect(response.text).toBe('');
        if (changed.length > 0) {
          expect(changed.sort()).toEqual(['audit_events', 'tokens']);
          await renewTokens();
        }
        if (stats.revoke.numRuns % 100 === 0) await expectAlive(app);
      }),
      fcParameters(fuzzRuns(300)),
    );
    await expectAlive(app);
    expect(Object.keys(stats.revoke.statuses)).toEqual(expect.arrayContaining(['200', '400', '401', '405']));
  }, 180_000);

  it('POST /introspect: every answer below 500, errors in JSON, `active` a boolean on 200, and never a write', async () => {
    const introspectCase = endpointCase('/introspect', [
      { form: { token: '{{access_token}}' }, authorization: '{{basic_service}}' },
      { form: { token: '{{refresh_token}}', token_type_hint: 'refresh_token' }, authorization: '{{basic_service}}' },
      { form: { token: '{{service_token}}', client_id: '{{client_id}}' }, authorization: '{{basic_service}}' },
      { form: { token: '{{access_token}}' }, authorization: '{{basic}}' },
    ]);
    await fc.assert(
      fc.asyncProperty(introspectCase, async (fuzzCase) => {
        stats.introspect.numRuns += 1;
        const request = toRawRequest(fuzzCase, slots);
        const response = await sendChecked(app, stats.introspect, request);
        if (response.status >= 400) expectJsonError(request, response);
        if (response.status === 200) expect(typeof (response.json as { active?: unknown }).active).toBe('boolean');
        await guard.afterCase(true, describeCase(request, response));
        if (stats.introspect.numRuns % 100 === 0) await expectAlive(app);
      }),
      fcParameters(fuzzRuns(200)),
    );
    await expectAlive(app);
    expect(Object.keys(stats.introspect.statuses)).toEqual(expect.arrayContaining(['200', '400', '401']));
    expect(Object.keys(stats.introspect.errors)).toEqual(expect.arrayContaining(['unauthorized_client', 'invalid_request', 'invalid_client']));
  }, 180_000);

  it('refuses a repeated parameter with 400 invalid_request (RFC 7009 §2.1, RFC 7662 §2.1 via RFC 6749 §3.2), writing nothing', async () => {
    const repeatedCase = fc
      .tuple(fc.constantFrom('/revoke', '/introspect'), repeatedParamsWire({ token: '{{access_token}}', token_type_hint: 'access_token' }, SPEC))
      .map(([path, { wire }]) => ({ method: 'POST', path, headers: { 'content-type': FORM, authorization: '{{basic_service}}' }, body: wire }));
    await fc.assert(
      fc.asyncProperty(repeatedCase, async (fuzzCase) => {
        stats.repeated.numRuns += 1;
        const request = toRawRequest(fuzzCase, slots);
        const response = await sendChecked(app, stats.repeated, request);
        await guard.afterCase(true, describeCase(request, response));
        expect({ status: response.status, error: (response.json as { error?: string } | undefined)?.error }).toEqual({ status: 400, error: 'invalid_request' });
      }),
      fcParameters(fuzzRuns(80)),
    );
  }, 120_000);
});
