/**
 * Threat model, authorization code (issue 7): a code that leaks (history, logs, a malicious app on
 * the device, a Referer) must be worth nothing to anyone but the client it was issued to, once,
 * within its lifetime, at the redirect URI it was issued for, by the holder of the PKCE verifier.
 */
import { jest } from '@jest/globals';
import { expectTokenError, expectTokenSuccess } from '../helpers/token-assertions.js';
import { newPkce, obtainCode, postToken, tokenRequest, type TokenResult, introspect as introspectAs } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';

describe('authorization code threats', () => {
  let app: TestApp;
  let clientA: RegisteredClient;
  let clientB: RegisteredClient;
  let publicB: RegisteredClient;
  let twoCallbacks: RegisteredClient;
  let resourceServer: RegisteredClient;
  let user: TestUser;

  beforeAll(async () => {
    app = await TestApp.start();
    clientA = await app.createClient({ name: 'Client A', redirectUris: ['https://a.example/cb'], scope: 'notes:read notes:write' });
    clientB = await app.createClient({ name: 'Client B', redirectUris: ['https://b.example/cb'], scope: 'notes:read notes:write' });
    publicB = await app.createClient({ name: 'Public B', redirectUris: ['http://127.0.0.1:7001/cb'], scope: 'notes:read', isPublic: true });
    twoCallbacks = await app.createClient({ name: 'Two Callbacks', redirectUris: ['https://two.example/one', 'https://two.example/two'], scope: 'notes:read' });
    resourceServer = await app.createClient({ name: 'Resource server', redirectUris: [], grantTypes: ['client_credentials'], scope: 'tokens:introspect' });
    user = await app.createUser();
  });
  afterAll(async () => app?.stop());
  afterEach(() => jest.restoreAllMocks());

  function redeem(client: RegisteredClient, code: string, verifier: string, extra: Record<string, string> = {}): Promise<TokenResult> {
    return tokenRequest(app, client, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: verifier, ...extra });
  }

  async function apiStatus(accessToken: string): Promise<number> {
    const response = await fetch(app.url('/api/v1/notes'), { headers: { authorization: `Bearer ${accessToken}` } });
    await response.arrayBuffer();
    return response.status;
  }

  const introspect = (token: string) => introspectAs(app, resourceServer, token);

  describe('RFC 6819 §4.4.1.1, §5.2.1.1 / RFC 6749 §4.1.2, §10.5: a code redeemed twice (replay)', () => {
    it('the second redemption is invalid_grant, and every token issued from the code is revoked', async () => {
      const { code, pkce } = await obtainCode(app, clientA, user);
      const first = await redeem(clientA, code, pkce.verifier);
      expectTokenSuccess(first, { expiresIn: 3600, scope: 'notes:read' });
      const accessToken = first.body.access_token as string;
      const refreshToken = first.body.refresh_token as string;
      // The tokens work before the replay, so the checks below can only pass because of it.
      expect(await apiStatus(accessToken)).toBe(200);
      expect(await introspect(accessToken)).toMatchObject({ active: true });

      const second = await redeem(clientA, code, pkce.verifier);
      expectTokenError(second, 400, 'invalid_grant');

      expect(await apiStatus(accessToken)).toBe(401);
      expect(await introspect(accessToken)).toEqual({ active: false });
      expect(await introspect(refreshToken)).toEqual({ active: false });
      expectTokenError(await tokenRequest(app, clientA, { grant_type: 'refresh_token', refresh_token: refreshToken }), 400, 'invalid_grant');
    });

    it('two redemptions racing each other: exactly one is answered with tokens', async () => {
      const { code, pkce } = await obtainCode(app, clientA, user);
      const results = await Promise.all(Array.from({ length: 5 }, () => redeem(clientA, code, pkce.verifier)));
      expect(results.map((r) => r.status).sort()).toEqual([200, 400, 400, 400, 400]);
      for (const result of results.filter((r) => r.status === 400)) expect(result.body.error).toBe('invalid_grant');
    });
  });

  describe('RFC 9700 §4.5 authorization code injection, RFC 6819 §5.2.4.4: a code is bound to its client and its PKCE challenge', () => {
    it("client B redeeming A's code with its own credentials → invalid_grant, and the code is dead afterwards", async () => {
      const { code, pkce } = await obtainCode(app, clientA, user);
      expectTokenError(await redeem(clientB, code, pkce.verifier, { redirect_uri: clientA.redirectUri }), 400, 'invalid_grant');
      // The failed attempt burnt the code: it cannot be retried, not even by its owner.
      expectTokenError(await redeem(clientA, code, pkce.verifier), 400, 'invalid_grant');
    });

    it("a public client redeeming A's code, even with A's verifier and redirect URI → invalid_grant", async () => {
      const { code, pkce } = await obtainCode(app, clientA, user);
      const result = await postToken(app, { grant_type: 'authorization_code', code, client_id: publicB.clientId, redirect_uri: clientA.redirectUri, code_verifier: pkce.verifier });
      expectTokenError(result, 400, 'invalid_grant');
    });

    it("the attacker's own verifier with a stolen code at the legitimate client (PKCE as the §4.5.3 defence) → invalid_grant", async () => {
      const { code } = await obtainCode(app, clientA, user);
      const attacker = newPkce();
      expectTokenError(await redeem(clientA, code, attacker.verifier), 400, 'invalid_grant');
    });
  });

  describe('RFC 6819 §4.4.1.7, §5.2.4.5 / RFC 6749 §4.1.3: redirect_uri at /token must equal the one of the authorization request', () => {
    it.each<[string, Record<string, string | undefined>]>([
      ['the other URI registered for the same client', { redirect_uri: 'https://two.example/two' }],
      ['an unregistered URI', { redirect_uri: 'https://evil.example/one' }],
      ['the same URI with a trailing slash', { redirect_uri: 'https://two.example/one/' }],
      ['the same URI in another case', { redirect_uri: 'https://TWO.example/one' }],
      ['no redirect_uri although the request named one', { redirect_uri: undefined }],
    ])('%s → invalid_grant', async (_, override) => {
      const { code, pkce } = await obtainCode(app, twoCallbacks, user, { redirect_uri: 'https://two.example/one' });
      const form: Record<string, string> = { grant_type: 'authorization_code', code, code_verifier: pkce.verifier };
      if (override.redirect_uri !== undefined) form.redirect_uri = override.redirect_uri;
      expectTokenError(await tokenRequest(app, twoCallbacks, form), 400, 'invalid_grant');
    });

    it('the identical redirect_uri is accepted (the cases above fail for the URI alone)', async () => {
      const { code, pkce } = await obtainCode(app, twoCallbacks, user, { redirect_uri: 'https://two.example/one' });
      const result = await tokenRequest(app, twoCallbacks, { grant_type: 'authorization_code', code, code_verifier: pkce.verifier, redirect_uri: 'https://two.example/one' });
      expect(result.status).toBe(200);
    });
  });

  describe('RFC 6819 §5.1.5.3, RFC 6749 §4.1.2: an expired code', () => {
    it('is invalid_grant one second past its 600 s lifetime', async () => {
      const { code, pkce } = await obtainCode(app, clientA, user);
      const issuedAt = Date.now();
      jest.spyOn(app.clock, 'now').mockReturnValue(new Date(issuedAt + 601_000));
      expectTokenError(await redeem(clientA, code, pkce.verifier), 400, 'invalid_grant');
    });

    it('is still redeemable shortly before its lifetime ends (so the test above fails on expiry alone)', async () => {
      const { code, pkce } = await obtainCode(app, clientA, user);
      const issuedAt = Date.now();
      jest.spyOn(app.clock, 'now').mockReturnValue(new Date(issuedAt + 590_000));
      expect((await redeem(clientA, code, pkce.verifier)).status).toBe(200);
    });
  });
});
