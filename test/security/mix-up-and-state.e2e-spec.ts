/**
 * Threat model, the authorization response (issue 7): a client that talks to several
 * authorization servers must be able to tell which one answered (mix-up, RFC 9207), and a client
 * that binds the response to the browser through `state` must get back exactly what it sent.
 */
import { request as httpRequest } from 'node:http';
import { Browser, type Page } from '../helpers/browser.js';
import { authorizeAsUser, authorizeUrl, newPkce, redirectParams } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';

const STATES: [string, string][] = [
  ['an ampersand', 'a&b'],
  ['an equals sign', 'a=b'],
  ['a plus sign', 'a+b'],
  ['a space', 'a b'],
  ['a percent sign', '100%'],
  ['something that looks percent-encoded', 'a%20b%2Bc%25'],
  ['a query-like string', 'x=1&code=lk_ac_fake&iss=https://evil.example'],
  ['a hash and a question mark', 'a#b?c'],
  ['quotes and angle brackets', `"'<script>`],
  ['non-ASCII letters', 'état-Zustand-状態'],
  ['an emoji (outside the BMP)', 'ok-😀'],
  ['500 characters', 'abcdefghij'.repeat(50)],
  ['500 characters of mixed special characters', '&=+ %é'.repeat(83) + 'xx'],
];

/** GET over plain HTTP with an arbitrary Host header (fetch does not let one set it). */
function getWithHost(url: string, host: string): Promise<{ status: number; location?: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { headers: { host, 'x-forwarded-host': host, 'x-forwarded-proto': 'https' } }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0, location: response.headers.location }));
    });
    request.on('error', reject).end();
  });
}

describe('authorization response threats', () => {
  let app: TestApp;
  let issuer: string;
  let client: RegisteredClient;
  let denied: RegisteredClient;
  let publicClient: RegisteredClient;
  let noCodeGrant: RegisteredClient;
  let user: TestUser;
  /** Signed in, has approved `client` and `publicClient` (notes:read) but never `denied`. */
  let browser: Browser;

  beforeAll(async () => {
    app = await TestApp.start();
    const metadata = (await (await fetch(app.url('/.well-known/oauth-authorization-server'))).json()) as { issuer: string };
    issuer = metadata.issuer;
    client = await app.createClient({ name: 'Client', redirectUris: ['https://client.example/cb'], scope: 'notes:read' });
    denied = await app.createClient({ name: 'Denied', redirectUris: ['https://denied.example/cb'], scope: 'notes:read' });
    publicClient = await app.createClient({ name: 'Public', redirectUris: ['http://127.0.0.1:7005/cb'], scope: 'notes:read', isPublic: true });
    noCodeGrant = await app.createClient({ name: 'Refresh only', redirectUris: ['https://refresh.example/cb'], scope: 'notes:read', grantTypes: ['refresh_token'] });
    user = await app.createUser();
    browser = new Browser(app.baseUrl);
    for (const c of [client, publicClient]) {
      const page = await authorizeAsUser(browser, user, authorizeUrl(c, { scope: 'notes:read', ...pkce() }));
      expect(redirectParams(page).get('code')).toMatch(/^lk_ac_/);
    }
  });
  afterAll(async () => app?.stop());

  function pkce(): Record<string, string> {
    return { code_challenge: newPkce().challenge, code_challenge_method: 'S256' };
  }

  /** The consent page of `denied` in the signed-in browser, then Deny. */
  async function deny(state: string): Promise<Page> {
    const consent = await browser.get(authorizeUrl(denied, { scope: 'notes:read', state, ...pkce() }));
    expect(consent.body).toContain('action="/consent"');
    return browser.submit(consent, '/consent', { decision: 'deny' });
  }

  describe('RFC 9700 §4.4 mix-up, RFC 9207: iss in every authorization response', () => {
    it('the metadata announces the iss parameter (RFC 9207 §3)', async () => {
      const metadata = (await (await fetch(app.url('/.well-known/oauth-authorization-server'))).json()) as Record<string, unknown>;
      expect(metadata.authorization_response_iss_parameter_supported).toBe(true);
      expect(metadata.issuer).toBe(issuer);
      expect(issuer).toMatch(/^https?:\/\/[^/?#]+$/);
    });

    const cases: [string, () => Promise<Page>, string | null][] = [
      ['a code, straight from /authorize (consent given before)', () => browser.get(authorizeUrl(client, { scope: 'notes:read', state: 's', ...pkce() })), null],
      [
        'a code after the consent page (Allow)',
        async () => {
          const person = await app.createUser();
          return authorizeAsUser(new Browser(app.baseUrl), person, authorizeUrl(client, { scope: 'notes:read', state: 's', ...pkce() }));
        },
        null,
      ],
      ['access_denied (Deny)', () => deny('s'), 'access_denied'],
      ['invalid_scope', () => browser.get(authorizeUrl(client, { scope: 'admin', state: 's', ...pkce() })), 'invalid_scope'],
      ['unsupported_response_type', () => browser.get(authorizeUrl(client, { response_type: 'token', state: 's', ...pkce() })), 'unsupported_response_type'],
      ['invalid_request (public client without PKCE)', () => browser.get(authorizeUrl(publicClient, { scope: 'notes:read', state: 's' })), 'invalid_request'],
      ['invalid_request (code_challenge_method=plain)', () => browser.get(authorizeUrl(client, { scope: 'notes:read', state: 's', code_challenge: newPkce().verifier, code_challenge_method: 'plain' })), 'invalid_request'],
      ['unauthorized_client', () => browser.get(authorizeUrl(noCodeGrant, { scope: 'notes:read', state: 's', ...pkce() })), 'unauthorized_client'],
    ];
    it.each(cases)('%s carries iss equal to the metadata issuer, exactly once', async (_, respond, error) => {
      const page = await respond();
      expect([302, 303]).toContain(page.status);
      const params = redirectParams(page);
      expect(params.getAll('iss')).toEqual([issuer]);
      expect(params.get('state')).toBe('s');
      if (error === null) expect(params.get('code')).toMatch(/^lk_ac_/);
      else expect(params.get('error')).toBe(error);
    });

    it('iss comes from the configuration, not from the Host or X-Forwarded-Host of the request', async () => {
      const reply = await getWithHost(app.url(authorizeUrl(client, { scope: 'admin', state: 's', ...pkce() })), 'evil.example');
      expect(reply.status).toBe(302);
      expect(new URL(reply.location!).searchParams.getAll('iss')).toEqual([issuer]);
    });
  });

  describe('RFC 6749 §4.1.2, §10.12: state comes back unchanged', () => {
    it.each(STATES)('with %s, on success', async (_, state) => {
      const page = await browser.get(authorizeUrl(client, { scope: 'notes:read', state, ...pkce() }));
      const params = redirectParams(page);
      expect(params.get('code')).toMatch(/^lk_ac_/);
      expect(params.getAll('state')).toEqual([state]);
    });

    it.each(STATES)('with %s, on access_denied', async (_, state) => {
      const params = redirectParams(await deny(state));
      expect(params.get('error')).toBe('access_denied');
      expect(params.getAll('state')).toEqual([state]);
    });

    it.each(STATES)('with %s, on invalid_scope', async (_, state) => {
      const params = redirectParams(await browser.get(authorizeUrl(client, { scope: 'notes:read admin', state, ...pkce() })));
      expect(params.get('error')).toBe('invalid_scope');
      expect(params.getAll('state')).toEqual([state]);
    });

    it('through the login page and the consent page (carried in both forms)', async () => {
      const state = STATES.map(([, s]) => s).join('|').slice(0, 900);
      const person = await app.createUser();
      const page = await authorizeAsUser(new Browser(app.baseUrl), person, authorizeUrl(client, { scope: 'notes:read', state, ...pkce() }));
      expect(page.status).toBe(303);
      expect(redirectParams(page).getAll('state')).toEqual([state]);
    });

    it('a state that only looks like response parameters adds none: one code, one iss', async () => {
      const params = redirectParams(await browser.get(authorizeUrl(client, { scope: 'notes:read', state: 'x&code=lk_ac_fake&iss=https://evil.example', ...pkce() })));
      expect(params.getAll('code')).toHaveLength(1);
      expect(params.get('code')).not.toBe('lk_ac_fake');
      expect(params.getAll('iss')).toEqual([issuer]);
    });
  });
});
