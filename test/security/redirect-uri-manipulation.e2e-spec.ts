/**
 * Threat model, redirect URIs (issue 7): an attacker who can make the server send a code (or even
 * an error) to a URI of their choosing steals codes or gets a trusted open redirector. Every
 * manipulated redirect_uri below must get the person an HTML error page, with no Location header,
 * even when the person is signed in and has already approved the client (where an accepted
 * request would redirect with a code at once).
 */
import { Browser, hiddenFields, type Page } from '../helpers/browser.js';
import { authorizeAsUser, authorizeUrl, newPkce, redirectParams } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';

const REGISTERED = 'https://client.example/cb';
const LOOPBACK = 'http://127.0.0.1:7003/cb';
/** "clіent.example" with a Cyrillic і (U+0456): looks like the registered host. */
const LOOK_ALIKE = 'https://cl\u0456ent.example/cb';

/** RFC 9700 §4.11, RFC 6819 §4.2.4: an error page for the person; the browser goes nowhere. */
function expectErrorPageNoRedirect(page: Page): void {
  expect(page.status).toBe(400);
  expect(page.location).toBeUndefined();
  expect(page.headers.get('location')).toBeNull();
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  expect(page.body).toMatch(/^<!doctype html>/i);
  expect(page.body).toContain('role="alert"');
  // Nothing on the page leads away from the server: every link and form stays on it.
  for (const [, target] of page.body.matchAll(/<(?:a\b[^>]*\bhref|form\b[^>]*\baction)="([^"]*)"/g)) expect(target).toMatch(/^\/(?!\/)/);
  expect(page.body).not.toMatch(/http-equiv="refresh"/i);
}

describe('redirect URI manipulation', () => {
  let app: TestApp;
  let client: RegisteredClient;
  let loopback: RegisteredClient;
  let other: RegisteredClient;
  let user: TestUser;
  /** Signed in, and has approved notes:read for `client` and `loopback` already. */
  let browser: Browser;

  beforeAll(async () => {
    app = await TestApp.start();
    client = await app.createClient({ name: 'Client', redirectUris: [REGISTERED], scope: 'notes:read' });
    loopback = await app.createClient({ name: 'Native', redirectUris: [LOOPBACK], scope: 'notes:read', isPublic: true });
    other = await app.createClient({ name: 'Other', redirectUris: ['https://other.example/cb'], scope: 'notes:read' });
    user = await app.createUser();
    browser = new Browser(app.baseUrl);
    for (const c of [client, loopback]) {
      const page = await authorizeAsUser(browser, user, authorizeUrl(c, { scope: 'notes:read', ...pkceParams() }));
      expect(redirectParams(page).get('code')).toMatch(/^lk_ac_/);
    }
  });
  afterAll(async () => app?.stop());

  function pkceParams(): Record<string, string> {
    return { code_challenge: newPkce().challenge, code_challenge_method: 'S256' };
  }

  async function codeCount(): Promise<number> {
    return app.dataSource.createQueryBuilder().from('authorization_codes', 'c').getCount();
  }

  describe('RFC 9700 §4.1, §2.1 / RFC 6819 §4.1.5, §5.2.3.5: exact string matching of redirect_uri', () => {
    it('the registered URI itself gets a code at once (the control: each case below differs only in redirect_uri)', async () => {
      const page = await browser.get(authorizeUrl(client, { redirect_uri: REGISTERED, scope: 'notes:read', state: 'x', ...pkceParams() }));
      expect(page.status).toBe(302);
      expect(page.location!.startsWith(`${REGISTERED}?code=lk_ac_`)).toBe(true);
    });

    it.each<[string, string]>([
      ['a longer path (prefix match)', `${REGISTERED}/extra`],
      ['a longer last segment', `${REGISTERED}x`],
      ['a shorter path', 'https://client.example/c'],
      ['the origin only', 'https://client.example'],
      ['an appended query', `${REGISTERED}?x=1`],
      ['an appended query naming another site', `${REGISTERED}?next=https://evil.example/`],
      ['path traversal', `${REGISTERED}/../evil`],
      ['encoded path traversal', `${REGISTERED}/%2e%2e/evil`],
      ['a path that normalises to the registered one', 'https://client.example/evil/../cb'],
      ['a dot segment', 'https://client.example/./cb'],
      ['a double slash', 'https://client.example//cb'],
      ['an upper-case host', 'https://CLIENT.EXAMPLE/cb'],
      ['an upper-case path', 'https://client.example/CB'],
      ['an upper-case scheme', 'HTTPS://client.example/cb'],
      ['the explicit default port', 'https://client.example:443/cb'],
      ['another port', 'https://client.example:8443/cb'],
      ['userinfo naming the client, host of the attacker', 'https://client.example@evil.example/cb'],
      ['userinfo of the attacker, host of the client', 'https://evil.example@client.example/cb'],
      ['user and password', 'https://user:pw@client.example/cb'],
      ['a backslash before @', 'https://evil.example\\@client.example/cb'],
      ['an encoded slash in the path', 'https://client.example/cb%2F'],
      ['an encoded slash in the host', 'https://client.example%2Fcb'],
      ['an encoded slash, encoded twice', 'https://client.example/cb%252F..%252Fevil'],
      ['a percent-encoded equivalent of the path', 'https://client.example/c%62'],
      ['an encoded NUL', 'https://client.example/cb%00'],
      ['a raw NUL', `${REGISTERED}\u0000`],
      ['a raw NUL before an attacker host', `https://evil.example\u0000.client.example/cb`],
      ['a fragment', `${REGISTERED}#fragment`],
      ['a trailing ?', `${REGISTERED}?`],
      ['a trailing #', `${REGISTERED}#`],
      ['a trailing /', `${REGISTERED}/`],
      ['a trailing dot on the host', 'https://client.example./cb'],
      ['a subdomain of the client', 'https://evil.client.example/cb'],
      ['the client as a subdomain of the attacker', 'https://client.example.evil.example/cb'],
      ['http instead of https', 'http://client.example/cb'],
      ['a websocket scheme', 'wss://client.example/cb'],
      ['a javascript: URI', 'javascript://client.example/cb%0aalert(1)'],
      ['a data: URI', 'data:text/html,<script>location="https://evil.example"</script>'],
      ['a scheme-relative reference', '//client.example/cb'],
      ['a relative reference', '/cb'],
      ['a look-alike host (IDN homograph)', LOOK_ALIKE],
      ['the punycode of the look-alike host', new URL(LOOK_ALIKE).href],
      ['leading whitespace', ` ${REGISTERED}`],
      ['a trailing newline', `${REGISTERED}\n`],
      ['a tab inside', 'https://client.example/\tcb'],
    ])('%s → error page, no redirect, no code', async (_, redirectUri) => {
      expect(redirectUri).not.toBe(REGISTERED);
      const before = await codeCount();
      const page = await browser.get(authorizeUrl(client, { redirect_uri: redirectUri, scope: 'notes:read', state: 'x', ...pkceParams() }));
      expectErrorPageNoRedirect(page);
      expect(await codeCount()).toBe(before);
    });

    it('the punycode case really is the look-alike host', () => {
      expect(new URL(LOOK_ALIKE).host).toMatch(/^xn--/);
    });
  });

  describe('RFC 8252 §7.3, RFC 9700 §2.1: loopback redirect URIs', () => {
    it('the registered loopback URI gets a code', async () => {
      const page = await browser.get(authorizeUrl(loopback, { scope: 'notes:read', ...pkceParams() }));
      expect(page.location!.startsWith(`${LOOPBACK}?code=lk_ac_`)).toBe(true);
    });

    // RFC 8252 §7.3: the port of a loopback IP redirect URI may vary, nothing else may.
    it.each<[string, string]>([
      ['another port', 'http://127.0.0.1:7004/cb'],
      ['no port', 'http://127.0.0.1/cb'],
    ])('%s → a code, sent to the requested port', async (_, redirectUri) => {
      const page = await browser.get(authorizeUrl(loopback, { redirect_uri: redirectUri, scope: 'notes:read', ...pkceParams() }));
      expect(page.location!.startsWith(`${redirectUri}?code=lk_ac_`)).toBe(true);
    });

    it.each<[string, string]>([
      ['localhost instead of 127.0.0.1', 'http://localhost:7003/cb'],
      ['[::1] instead of 127.0.0.1', 'http://[::1]:7003/cb'],
      ['another loopback address', 'http://127.0.0.2:7003/cb'],
      ['a short form of 127.0.0.1', 'http://127.1:7003/cb'],
      ['https instead of http', 'https://127.0.0.1:7003/cb'],
      ['another path', 'http://127.0.0.1:7003/other'],
      ['another port and another path', 'http://127.0.0.1:7004/other'],
      ['another port and a query', 'http://127.0.0.1:7004/cb?x=1'],
      ['port 0', 'http://127.0.0.1:0/cb'],
      ['userinfo before the address', 'http://evil@127.0.0.1:7003/cb'],
    ])('%s → error page, no redirect', async (_, redirectUri) => {
      const page = await browser.get(authorizeUrl(loopback, { redirect_uri: redirectUri, scope: 'notes:read', state: 'x', ...pkceParams() }));
      expectErrorPageNoRedirect(page);
    });
  });

  describe('RFC 9700 §4.11, RFC 6819 §4.2.4: no open redirect through error responses', () => {
    it.each<[string, Record<string, string | undefined>]>([
      ['an unknown client_id with a valid-looking redirect_uri', { client_id: 'no-such-client', redirect_uri: REGISTERED }],
      ['an unknown client_id with an attacker redirect_uri', { client_id: 'no-such-client', redirect_uri: 'https://evil.example/cb' }],
      ["another client's registered redirect_uri", { redirect_uri: 'https://other.example/cb' }],
      ['an unregistered redirect_uri and an unsupported response_type', { redirect_uri: 'https://evil.example/cb', response_type: 'token' }],
      ['an unregistered redirect_uri and an invalid scope', { redirect_uri: 'https://evil.example/cb', scope: 'admin' }],
      ['an unregistered redirect_uri and no PKCE for a public client', { client_id: 'LOOPBACK', redirect_uri: 'https://evil.example/cb', code_challenge: undefined, code_challenge_method: undefined }],
      ['an unregistered redirect_uri and code_challenge_method=plain', { redirect_uri: 'https://evil.example/cb', code_challenge_method: 'plain' }],
    ])('%s → error page, no redirect', async (_, params) => {
      const resolved = { ...params, client_id: params.client_id === 'LOOPBACK' ? loopback.clientId : params.client_id };
      const page = await browser.get(authorizeUrl(client, { scope: 'notes:read', state: 'x', ...pkceParams(), ...resolved }));
      expectErrorPageNoRedirect(page);
    });

    it('the same errors with the registered redirect_uri are redirected (so the cases above fail on the redirect URI alone)', async () => {
      const page = await browser.get(authorizeUrl(client, { redirect_uri: REGISTERED, scope: 'admin', state: 'x', ...pkceParams() }));
      expect(page.status).toBe(302);
      expect(redirectParams(page).get('error')).toBe('invalid_scope');
    });

    it('a consent form whose carried request was altered to another redirect_uri → error page, no redirect, no code', async () => {
      const second = await app.createUser();
      const b = new Browser(app.baseUrl);
      const login = await b.get(authorizeUrl(other, { scope: 'notes:read', state: 'x' }));
      const afterLogin = await b.submit(login, '/login', { username: second.username, password: second.password });
      const consentPage = await b.get(afterLogin.location!);
      expect(consentPage.body).toContain('action="/consent"');
      const fields = hiddenFields(consentPage.body, '/consent');
      const tampered = new URLSearchParams(fields.authorization_request);
      tampered.set('redirect_uri', 'https://evil.example/cb');
      const before = await codeCount();
      const page = await b.post('/consent', { ...fields, authorization_request: tampered.toString(), decision: 'allow' });
      expectErrorPageNoRedirect(page);
      expect(await codeCount()).toBe(before);
    });
  });
});
