/**
 * Threat model, PKCE (issue 7): PKCE only protects a code if an attacker cannot step around it:
 * by dropping the verifier, by adding one to a code that had no challenge, by falling back to the
 * plain method (where the challenge seen in the front channel is the verifier), or by a public
 * client not using it at all.
 */
import { appConfig } from '../../src/config/app.config.js';
import { authorizeAsUser, authorizeUrl, newPkce, redirectParams, tokenRequest } from '../helpers/oauth-flow.js';
import { Browser } from '../helpers/browser.js';
import { expectTokenError } from '../helpers/token-assertions.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';

describe('PKCE downgrade', () => {
  let app: TestApp;
  let issuer: string;
  let confidential: RegisteredClient;
  let publicClient: RegisteredClient;
  let user: TestUser;

  beforeAll(async () => {
    app = await TestApp.start();
    issuer = app.app.get(appConfig.KEY).issuer;
    confidential = await app.createClient({ name: 'Web App', redirectUris: ['https://web.example/cb'], scope: 'notes:read' });
    publicClient = await app.createClient({ name: 'Native App', redirectUris: ['http://127.0.0.1:7002/cb'], scope: 'notes:read', isPublic: true });
    user = await app.createUser();
  });
  afterAll(async () => app?.stop());

  /** A code issued to `client` for `user`, with or without a S256 challenge. */
  async function codeFor(client: RegisteredClient, withChallenge: boolean): Promise<{ code: string; verifier: string; challenge: string }> {
    const pkce = newPkce();
    const params: Record<string, string | undefined> = withChallenge
      ? { scope: 'notes:read', state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256' }
      : { scope: 'notes:read', state: 's' };
    const page = await authorizeAsUser(new Browser(app.baseUrl), user, authorizeUrl(client, params));
    const code = redirectParams(page).get('code');
    if (!code) throw new Error(`No code in ${page.location}`);
    return { code, verifier: pkce.verifier, challenge: pkce.challenge };
  }

  function redeem(client: RegisteredClient, code: string, verifier?: string) {
    const form: Record<string, string> = { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri };
    if (verifier !== undefined) form.code_verifier = verifier;
    if (!client.clientSecret) form.client_id = client.clientId;
    return tokenRequest(app, client, form);
  }

  describe('RFC 9700 §4.8.2, RFC 7636 §4.6: a challenge was sent, the verifier is omitted', () => {
    it.each(['confidential', 'public'])('%s client → invalid_grant', async (kind) => {
      const client = kind === 'public' ? publicClient : confidential;
      const { code } = await codeFor(client, true);
      expectTokenError(await redeem(client, code), 400, 'invalid_grant');
    });
  });

  describe('RFC 9700 §2.1.1, §4.8.2: a verifier for a code issued without a challenge', () => {
    it('→ invalid_grant', async () => {
      const { code } = await codeFor(confidential, false);
      expectTokenError(await redeem(confidential, code, newPkce().verifier), 400, 'invalid_grant');
    });

    it('the same code without a verifier is redeemed (a confidential client may skip PKCE; only the verifier is refused above)', async () => {
      const { code } = await codeFor(confidential, false);
      expect((await redeem(confidential, code)).status).toBe(200);
    });
  });

  describe('RFC 7636 §4.6: a wrong verifier', () => {
    it.each<[string, (p: { verifier: string; challenge: string }) => string]>([
      ['another well-formed verifier', () => newPkce().verifier],
      ['the challenge itself (what the plain method would accept)', (p) => p.challenge],
      ['the verifier with its last character changed', (p) => p.verifier.slice(0, -1) + (p.verifier.endsWith('A') ? 'B' : 'A')],
      ['the verifier in upper case', (p) => p.verifier.toUpperCase()],
    ])('%s → invalid_grant', async (_, wrong) => {
      const issued = await codeFor(confidential, true);
      const verifier = wrong(issued);
      expect(verifier).not.toBe(issued.verifier);
      expectTokenError(await redeem(confidential, issued.code, verifier), 400, 'invalid_grant');
    });

    it('the right verifier is accepted (so each case above fails on the verifier alone)', async () => {
      const issued = await codeFor(confidential, true);
      expect((await redeem(confidential, issued.code, issued.verifier)).status).toBe(200);
    });

    it('a malformed verifier (42 characters, RFC 7636 §4.1) → invalid_request, no tokens', async () => {
      const issued = await codeFor(confidential, true);
      const result = await redeem(confidential, issued.code, issued.verifier.slice(0, 42));
      expectTokenError(result, 400, 'invalid_request');
    });
  });

  describe('RFC 9700 §2.1.1, RFC 7636 §4.3: only S256 is accepted at /authorize', () => {
    it('the metadata offers S256 and nothing else', async () => {
      const metadata = (await (await fetch(app.url('/.well-known/oauth-authorization-server'))).json()) as Record<string, unknown>;
      expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
    });

    it.each<[string, string | undefined]>([
      ['plain', 'plain'],
      ['omitted (RFC 7636 §4.3 defaults to plain)', undefined],
      ['s256 in lower case', 's256'],
      ['an unknown method', 'SHA512'],
    ])('code_challenge_method %s → invalid_request redirect, no code', async (_, method) => {
      const pkce = newPkce();
      // Signed in and consented before, so a code would be issued at once if the request were accepted.
      const browser = new Browser(app.baseUrl);
      await authorizeAsUser(browser, user, authorizeUrl(publicClient, { scope: 'notes:read', code_challenge: pkce.challenge, code_challenge_method: 'S256' }));
      const page = await browser.get(authorizeUrl(publicClient, { scope: 'notes:read', state: 'st', code_challenge: pkce.verifier, code_challenge_method: method }));
      expect(page.status).toBe(302);
      const params = redirectParams(page);
      expect(params.get('error')).toBe('invalid_request');
      expect(params.get('state')).toBe('st');
      expect(params.get('iss')).toBe(issuer);
      expect(params.has('code')).toBe(false);
    });

    it('the same signed-in browser gets a code with S256 (so the cases above fail on the method alone)', async () => {
      const pkce = newPkce();
      const browser = new Browser(app.baseUrl);
      await authorizeAsUser(browser, user, authorizeUrl(publicClient, { scope: 'notes:read', code_challenge: pkce.challenge, code_challenge_method: 'S256' }));
      const page = await browser.get(authorizeUrl(publicClient, { scope: 'notes:read', code_challenge: newPkce().challenge, code_challenge_method: 'S256' }));
      expect(redirectParams(page).get('code')).toMatch(/^lk_ac_/);
    });
  });

  describe('RFC 9700 §2.1.1: a public client without PKCE', () => {
    it('is refused at /authorize with invalid_request, even for a signed-in user who consented before', async () => {
      const browser = new Browser(app.baseUrl);
      const first = await authorizeAsUser(browser, user, authorizeUrl(publicClient, { scope: 'notes:read', code_challenge: newPkce().challenge, code_challenge_method: 'S256' }));
      expect(redirectParams(first).get('code')).toMatch(/^lk_ac_/);
      const page = await browser.get(authorizeUrl(publicClient, { scope: 'notes:read', state: 'no-pkce' }));
      expect(page.status).toBe(302);
      const params = redirectParams(page);
      expect(params.get('error')).toBe('invalid_request');
      expect(params.get('state')).toBe('no-pkce');
      expect(params.has('code')).toBe(false);
    });
  });
});
