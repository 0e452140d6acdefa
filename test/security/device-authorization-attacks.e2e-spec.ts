/**
 * The device authorization grant (RFC 8628) against an attacker, over real HTTP: user codes guessed
 * at the verification page are throttled per address and per session (§5.1); a link carrying a
 * user code still asks the person to confirm it and warns them (§5.4, remote phishing); clients not
 * registered for the grant, and FAPI 2.0 clients, get no device codes; what a device obtained dies
 * with the approving session or the withdrawn consent; malformed requests get a 4xx, never a 500,
 * and a refused form changes nothing in the database. Also: a sign-in level the client asks for
 * (default_acr_values) is reached before the person may allow, as in the code flow.
 */
import { jest } from '@jest/globals';
import { createHash } from 'node:crypto';
import { decodeJwt } from 'jose';
import { ClientsService } from '../../src/clients/clients.service.js';
import { Browser, hiddenFields, isLoginPage } from '../helpers/browser.js';
import {
  decideDevice,
  DEVICE_CODE_GRANT,
  isDeviceConsentPage,
  openVerificationPage,
  pollToken,
  requestDeviceAuthorization,
  signInFrom,
  signOut,
  submitUserCode,
  userCodeField,
} from '../helpers/device.js';
import { enrolFrom } from '../helpers/second-factor.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';
import { expectTokenError } from '../helpers/token-assertions.js';

describe('Device authorization grant (RFC 8628): attacks and refusals', () => {
  let app: TestApp;
  let user: TestUser;

  const deviceClient = (options: Parameters<TestApp['createClient']>[0] = {}): Promise<RegisteredClient> =>
    app.createClient({ name: 'TV app', redirectUris: [], isPublic: true, grantTypes: [DEVICE_CODE_GRANT, 'refresh_token'], scope: 'notes:read', ...options });

  async function started(client: RegisteredClient, params: Record<string, string> = {}): Promise<{ device_code: string; user_code: string; verification_uri_complete: string }> {
    const reply = await requestDeviceAuthorization(app.baseUrl, client, params);
    expect(reply.status).toBe(200);
    return reply.body as { device_code: string; user_code: string; verification_uri_complete: string };
  }

  const statusOf = async (deviceCode: string): Promise<string | undefined> => {
    const rows = (await app.dataSource.query(`SELECT "status" FROM "device_authorizations" WHERE "device_code_hash" = '${createHash('sha256').update(deviceCode).digest('hex')}'`)) as { status: string }[];
    return rows[0]?.status;
  };
  const deviceRows = async (): Promise<number> => Number(((await app.dataSource.query('SELECT COUNT(*) AS "n" FROM "device_authorizations"')) as { n: string | number }[])[0].n);
  const readNotes = (token: string): Promise<Response> => fetch(app.url('/api/v1/notes'), { headers: { authorization: `Bearer ${token}` } });

  /** The device gets tokens after `browser`'s person approved it. */
  async function deviceTokens(client: RegisteredClient, browser: Browser, scope = 'notes:read'): Promise<Record<string, unknown>> {
    const { device_code, user_code } = await started(client, { scope });
    await decideDevice(browser, user, user_code);
    const reply = await pollToken(app.baseUrl, client, device_code);
    expect(reply.status).toBe(200);
    return reply.body;
  }

  beforeAll(async () => {
    app = await TestApp.start({ RATE_LIMIT_CLIENT_PER_MINUTE: '0', DEVICE_CODE_INTERVAL_SECONDS: '1', LOGIN_FREE_FAILURES: '5' });
    user = await app.createUser();
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(async () => app?.stop());

  describe('user-code brute force (§5.1)', () => {
    it('after 5 wrong codes the next attempt waits (429, Retry-After) unchecked, even with the right code, in this session and in a fresh one from the same address', async () => {
      const attacker = await app.createUser();
      const { device_code, user_code } = await started(await deviceClient());
      const browser = new Browser(app.baseUrl);
      const entry = await openVerificationPage(browser, attacker);
      for (let i = 0; i < 5; i++) {
        const wrong = await submitUserCode(browser, entry, 'BCDF-GHJK');
        expect(wrong.status).toBe(400);
        expect(wrong.body).toContain('That code is not valid');
      }
      const throttled = await submitUserCode(browser, entry, user_code);
      expect(throttled.status).toBe(429);
      expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(isDeviceConsentPage(throttled)).toBe(false);

      // Signing in again for a new session does not reset the address's count.
      const again = new Browser(app.baseUrl);
      const fresh = await submitUserCode(again, await openVerificationPage(again, attacker), user_code);
      expect(fresh.status).toBe(429);
      expect(await statusOf(device_code)).toBe('pending');
    });

    it('a right code takes back its attempt: a person who types their code right is never throttled by their own successes', async () => {
      // Past the first test's wait (the counters live on, forgotten only after their window).
      jest.spyOn(app.clock, 'now').mockReturnValue(new Date(Date.now() + 3_600_000));
      const client = await deviceClient();
      const browser = new Browser(app.baseUrl);
      for (let i = 0; i < 7; i++) {
        const { user_code } = await started(client);
        const consent = await submitUserCode(browser, await openVerificationPage(browser, user), user_code);
        expect(isDeviceConsentPage(consent)).toBe(true);
      }
    });
  });

  describe('remote phishing (§5.4)', () => {
    it('verification_uri_complete pre-fills the code but approves nothing: the person confirms it, then sees the consent page with the warning, and only Allow approves', async () => {
      const { device_code, user_code, verification_uri_complete } = await started(await deviceClient());
      const browser = new Browser(app.baseUrl);
      const path = new URL(verification_uri_complete).pathname + new URL(verification_uri_complete).search;
      const login = await browser.get(path);
      expect(isLoginPage(login)).toBe(true);
      const entry = await signInFrom(browser, login, user);
      expect(entry.status).toBe(200);
      expect(userCodeField(entry)).toBe(user_code);
      expect(entry.body).toContain('Check that it is the same code your device shows');
      expect(await statusOf(device_code)).toBe('pending');
      expectTokenError(await pollToken(app.baseUrl, await deviceClientOf(device_code), device_code), 400, 'authorization_pending');

      const consent = await submitUserCode(browser, entry);
      expect(isDeviceConsentPage(consent)).toBe(true);
      expect(consent.body).toContain('Allow only a device you are holding');
      expect(consent.body).toContain(user_code);
      expect(consent.body).toContain('TV app');
      expect(consent.body).toContain('See your notes');
      expect(await statusOf(device_code)).toBe('pending');

      await browser.submit(consent, '/device/decision', { decision: 'allow' });
      expect(await statusOf(device_code)).toBe('approved');
    });

    it('a user code in the link that is not a code is neither pre-filled nor reflected', async () => {
      const browser = new Browser(app.baseUrl);
      await openVerificationPage(browser, user);
      const page = await browser.get('/device?user_code=%3Cscript%3Ealert(1)%3C%2Fscript%3E');
      expect(page.status).toBe(200);
      expect(userCodeField(page)).toBe('');
      expect(page.body).not.toContain('<script>');
    });
  });

  /** The client a device_code belongs to, as the tests registered it (public: its id suffices). */
  async function deviceClientOf(deviceCode: string): Promise<RegisteredClient> {
    const rows = (await app.dataSource.query(`SELECT "client_id" FROM "device_authorizations" WHERE "device_code_hash" = '${createHash('sha256').update(deviceCode).digest('hex')}'`)) as { client_id: string }[];
    return { clientId: rows[0].client_id, redirectUri: '' };
  }

  describe('device-code replay', () => {
    it('a device code redeemed once is refused after (invalid_grant), also racing, and the redemption\'s tokens stay good', async () => {
      const client = await deviceClient();
      const { device_code, user_code } = await started(client);
      await decideDevice(new Browser(app.baseUrl), user, user_code);
      const racing = await Promise.all(Array.from({ length: 5 }, () => pollToken(app.baseUrl, client, device_code)));
      const won = racing.filter((reply) => reply.status === 200);
      expect(won).toHaveLength(1);
      for (const lost of racing.filter((reply) => reply.status !== 200)) expectTokenError(lost, 400, 'invalid_grant');
      expectTokenError(await pollToken(app.baseUrl, client, device_code), 400, 'invalid_grant');
      expect(await statusOf(device_code)).toBe('redeemed');
      expect((await readNotes(won[0].body.access_token as string)).status).toBe(200);
    });
  });

  describe('clients that may not use the grant', () => {
    it('a public client not registered for it gets unauthorized_client at /device_authorization and at /token, and nothing is stored', async () => {
      const spa = await app.createClient({ isPublic: true, scope: 'notes:read' });
      const before = await deviceRows();
      expectTokenError(await requestDeviceAuthorization(app.baseUrl, spa), 400, 'unauthorized_client');
      expectTokenError(await pollToken(app.baseUrl, spa, 'lk_dc_anything'), 400, 'unauthorized_client');
      expect(await deviceRows()).toBe(before);
    });

    it('a client held to FAPI 2.0 cannot be registered for it (the profile allows the code flow only)', async () => {
      const { generateKeyPair, exportJWK } = await import('jose');
      const { publicKey } = await generateKeyPair('ES256');
      const { kty, crv, x, y } = await exportJWK(publicKey);
      const register = app.app.get(ClientsService).create({
        name: 'FAPI device',
        redirectUris: ['https://rp.example/cb'],
        scope: 'notes:read',
        grantTypes: ['authorization_code', DEVICE_CODE_GRANT],
        tokenEndpointAuthMethod: 'private_key_jwt',
        keys: { jwks: { keys: [{ kty: kty!, crv: crv!, x: x!, y: y!, kid: 'k1', alg: 'ES256', use: 'sig' }] } },
        openId: { security_profile: 'fapi2', require_pushed_authorization_requests: true, dpop_bound_access_tokens: true, id_token_signed_response_alg: 'ES256' },
      });
      await expect(register).rejects.toMatchObject({ code: 'invalid_client_metadata', message: expect.stringContaining(`grant_types must not include ${DEVICE_CODE_GRANT}`) });
    });

    it('a confidential client must authenticate (invalid_client, 401), and cannot use another client\'s device_code', async () => {
      const tv = await deviceClient({ isPublic: false });
      const noSecret: RegisteredClient = { clientId: tv.clientId, redirectUri: '' };
      expectTokenError(await requestDeviceAuthorization(app.baseUrl, { ...noSecret, clientSecret: 'wrong' }), 401, 'invalid_client');
      const { device_code, user_code } = await started(tv);
      await decideDevice(new Browser(app.baseUrl), user, user_code);
      expectTokenError(await pollToken(app.baseUrl, await deviceClient(), device_code), 400, 'invalid_grant');
      expect(await statusOf(device_code)).toBe('approved');
    });
  });

  describe('what a device obtained ends with the approving session and with the consent', () => {
    it('signing out revokes the device\'s tokens, and denies a request it approved that the device has not yet picked up', async () => {
      const client = await deviceClient();
      const browser = new Browser(app.baseUrl);
      const tokens = await deviceTokens(client, browser);
      const waiting = await started(client);
      await decideDevice(browser, user, waiting.user_code);
      expect((await readNotes(tokens.access_token as string)).status).toBe(200);

      await signOut(browser);
      expect((await readNotes(tokens.access_token as string)).status).toBe(401);
      const refreshed = await fetch(app.url('/token'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token as string, client_id: client.clientId }).toString() });
      expect(refreshed.status).toBe(400);
      expectTokenError(await pollToken(app.baseUrl, client, waiting.device_code), 400, 'access_denied');
    });

    it('withdrawing the application\'s access revokes the device\'s tokens, and denies what was approved but not picked up', async () => {
      const client = await deviceClient();
      const browser = new Browser(app.baseUrl);
      const tokens = await deviceTokens(client, browser);
      const waiting = await started(client);
      await decideDevice(browser, user, waiting.user_code);

      const access = await browser.get('/account');
      expect(access.body).toContain('TV app');
      const withdrawn = await browser.post('/account/access/withdraw', { csrf_token: hiddenFields(access.body, '/account/access/withdraw').csrf_token, client_id: client.clientId });
      expect(withdrawn.status).toBe(303);
      expect((await readNotes(tokens.access_token as string)).status).toBe(401);
      expectTokenError(await pollToken(app.baseUrl, client, waiting.device_code), 400, 'access_denied');
    });
  });

  describe('the sign-in level the client asks for (default_acr_values)', () => {
    it('a person without a second factor enrols one before allowing, and the device\'s ID token says mfa', async () => {
      const client = await deviceClient({ scope: 'notes:read', openId: { default_acr_values: ['urn:latchkey:acr:mfa'] } });
      const person = await app.createUser();
      const { device_code, user_code } = await started(client, { scope: 'openid notes:read' });
      const browser = new Browser(app.baseUrl);
      const next = await submitUserCode(browser, await openVerificationPage(browser, person), user_code);
      expect(next.status).toBe(303);
      expect(next.location).toBe(`/account/one-time-codes?return_to=${encodeURIComponent(`/device?user_code=${user_code}`)}`);
      const { done } = await enrolFrom(browser, await browser.get(next.location!), Date.now());
      expect(done.body).toContain(`/device?user_code=${user_code}`);
      const consent = await submitUserCode(browser, await browser.get(`/device?user_code=${user_code}`));
      expect(isDeviceConsentPage(consent)).toBe(true);
      await browser.submit(consent, '/device/decision', { decision: 'allow' });
      const reply = await pollToken(app.baseUrl, client, device_code);
      expect(reply.status).toBe(200);
      expect(decodeJwt(reply.body.id_token as string)).toMatchObject({ acr: 'urn:latchkey:acr:mfa' });
    });
  });

  describe('malformed and refused requests: 4xx, never 500, nothing changed', () => {
    it.each([
      ['no device_code', 'invalid_request', { grant_type: DEVICE_CODE_GRANT }],
      ['a device_code too long', 'invalid_request', { grant_type: DEVICE_CODE_GRANT, device_code: 'x'.repeat(600) }],
      ['an unknown device_code', 'invalid_grant', { grant_type: DEVICE_CODE_GRANT, device_code: 'lk_dc_unknown' }],
    ])('/token with %s: 400 %s', async (_name, error, form) => {
      const client = await deviceClient();
      const response = await fetch(app.url('/token'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ ...form, client_id: client.clientId }).toString() });
      expectTokenError({ status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> }, 400, error);
    });

    it.each([
      ['a malformed scope', 'invalid_scope', 'notes:read "'],
      ['a scope the client was not registered for', 'invalid_scope', 'notes:write'],
      ['an unknown scope', 'invalid_scope', 'admin'],
    ])('/device_authorization with %s: 400 %s, nothing stored', async (_name, error, scope) => {
      const before = await deviceRows();
      expectTokenError(await requestDeviceAuthorization(app.baseUrl, await deviceClient(), { scope }), 400, error);
      expect(await deviceRows()).toBe(before);
    });

    it('/device_authorization with a JSON body is refused with a 4xx and an error', async () => {
      const client = await deviceClient();
      const response = await fetch(app.url('/device_authorization'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_id: client.clientId }) });
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      expect(await response.json()).toHaveProperty('error');
    });

    it('the verification forms: without the CSRF token 403, an unknown decision 400, an overlong code 400; the request stays pending', async () => {
      const { device_code, user_code } = await started(await deviceClient());
      const browser = new Browser(app.baseUrl);
      const entry = await openVerificationPage(browser, user);
      expect((await browser.post('/device', { user_code })).status).toBe(403);
      const consent = await submitUserCode(browser, entry, user_code);
      expect((await browser.post('/device/decision', { user_code, decision: 'allow' })).status).toBe(403);
      expect((await browser.submit(consent, '/device/decision', { decision: 'maybe' })).status).toBe(400);
      const csrf = hiddenFields(entry.body, '/device').csrf_token;
      expect((await browser.post('/device', { csrf_token: csrf, user_code: 'B'.repeat(5000) })).status).toBe(400);
      expect(await statusOf(device_code)).toBe('pending');
    });

    it('a cross-site page posting Allow with the person\'s cookie (and even the CSRF token) is refused, and nothing is decided', async () => {
      const { device_code, user_code } = await started(await deviceClient());
      const browser = new Browser(app.baseUrl);
      const consent = await submitUserCode(browser, await openVerificationPage(browser, user), user_code);
      const crossSite = { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' };
      expect((await browser.post('/device/decision', { ...hiddenFields(consent.body, '/device/decision'), decision: 'allow' }, crossSite)).status).toBe(403);
      expect((await browser.post('/device', { ...hiddenFields(consent.body, '/device/decision') }, crossSite)).status).toBe(403);
      expect(await statusOf(device_code)).toBe('pending');
    });

    it('nobody signed in: the forms show the sign-in page and decide nothing', async () => {
      const { device_code, user_code } = await started(await deviceClient());
      const stranger = new Browser(app.baseUrl);
      expect(isLoginPage(await stranger.get('/device'))).toBe(true);
      expect(isLoginPage(await stranger.post('/device/decision', { user_code, decision: 'allow' }))).toBe(true);
      expect(await statusOf(device_code)).toBe('pending');
    });
  });
});
