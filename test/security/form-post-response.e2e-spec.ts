import { createHash } from 'node:crypto';
import { appConfig } from '../../src/config/app.config.js';
import { Browser, isConsentPage, sessionCookie } from '../helpers/browser.js';
import { authorizeAsUser, authorizeUrl, newPkce, tokenRequest } from '../helpers/oauth-flow.js';
import { formPostedTo } from '../helpers/relying-party.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';

const RP = 'https://rp.example/callback';
const HOSTILE_STATE = '"><script>alert(document.cookie)</script><input value="';

/**
 * response_mode=form_post (OAuth 2.0 Form Post Response Mode, issue 37): the authorization response
 * is a page of ours whose form the browser posts, cross-site, to the client's redirect URI. The
 * page must carry the client's values without letting them become markup (they are attacker-
 * chosen: state above all), run no script but its own submit, go nowhere but the verified
 * redirect URI, and not be cached or framed.
 */
describe('form_post responses (Form Post Response Mode §2)', () => {
  let app: TestApp;
  let issuer: string;
  let user: TestUser;
  let codeClient: RegisteredClient;

  beforeAll(async () => {
    app = await TestApp.start();
    issuer = app.app.get(appConfig.KEY).issuer;
    user = await app.createUser();
    codeClient = await app.createClient({ name: 'Code app', redirectUris: [RP], scope: 'notes:read' });
  });
  afterAll(async () => app?.stop());

  it('a code is posted by an auto-submitting form: code, state and iss as hidden fields, one inline script allowed by its hash, a button without script; the code redeems', async () => {
    const pkce = newPkce();
    const browser = new Browser(app.baseUrl);
    const page = await authorizeAsUser(browser, user, authorizeUrl(codeClient, { scope: 'openid notes:read', state: 'S-1', nonce: 'N-1', response_mode: 'form_post', code_challenge: pkce.challenge, code_challenge_method: 'S256' }));
    const posted = formPostedTo(page, RP);
    expect(posted).toEqual({ code: expect.any(String), state: 'S-1', iss: issuer });
    // The one script, allowed by its SHA-256 and nothing else; the form may go to the client's origin only.
    const scripts = [...page.body.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((match) => match[1]);
    expect(scripts).toHaveLength(1);
    expect(page.body.match(/<script/g)).toHaveLength(1);
    const hash = createHash('sha256').update(scripts[0]).digest('base64');
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain(`script-src 'sha256-${hash}';`);
    expect(csp).toContain("form-action 'self' https://rp.example;");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    // Not framed (clickjacking), and the POST to the client names no page of ours (our URL holds the request).
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.body).toMatch(/<button type="submit">/);
    const tokens = await tokenRequest(app, codeClient, { grant_type: 'authorization_code', code: posted.code, redirect_uri: RP, code_verifier: pkce.verifier });
    expect(tokens.status).toBe(200);
    expect(tokens.body.id_token).toEqual(expect.any(String));
  });

  it('our sign-in session still works for the flow (SameSite=Lax, the client receives the POST): signed in and consented, the next request is posted at once', async () => {
    const client = await app.createClient({ name: 'Fresh app', redirectUris: [RP], scope: 'notes:read' });
    const browser = new Browser(app.baseUrl);
    const first = await browser.get(authorizeUrl(client, { scope: 'notes:read', state: 'warm', response_mode: 'form_post', ...s256() }));
    const login = await browser.submit(first, '/login', { username: user.username, password: user.password });
    expect(sessionCookie(login)).toMatch(/SameSite=Lax/i);
    const consent = await browser.get(login.location!);
    expect(isConsentPage(consent)).toBe(true);
    formPostedTo(await browser.submit(consent, '/consent', { decision: 'allow' }), RP);
    const again = await browser.get(authorizeUrl(client, { scope: 'notes:read', state: 'again', response_mode: 'form_post', ...s256() }));
    expect(formPostedTo(again, RP)).toEqual({ code: expect.any(String), state: 'again', iss: issuer });
  });

  it('a hostile state is posted back exactly as sent and never echoed unescaped: no markup of its own reaches the page', async () => {
    const page = await authorizeAsUser(new Browser(app.baseUrl), user, authorizeUrl(codeClient, { scope: 'notes:read', state: HOSTILE_STATE, response_mode: 'form_post', ...s256() }));
    expect(formPostedTo(page, RP).state).toBe(HOSTILE_STATE);
    expect(page.body).not.toContain('<script>alert');
    expect(page.body).not.toContain('"><');
    expect(page.body).toContain('&quot;&gt;&lt;script&gt;alert(document.cookie)&lt;/script&gt;');
    expect(page.body.match(/<script/g)).toHaveLength(1);
    expect(page.body.match(/<input /g)).toHaveLength(3);
  });

  it('an error for a verified client and redirect URI is posted too: error, error_description, state and iss, hostile state escaped', async () => {
    const page = await new Browser(app.baseUrl).get(authorizeUrl(codeClient, { scope: 'notes:delete-everything', state: HOSTILE_STATE, response_mode: 'form_post', ...s256() }));
    expect(formPostedTo(page, RP)).toEqual({ error: 'invalid_scope', error_description: expect.any(String), state: HOSTILE_STATE, iss: issuer });
    expect(page.body).not.toContain('<script>alert');
  });

  it('the person denying consent is posted as access_denied', async () => {
    const client = await app.createClient({ name: 'Refused app', redirectUris: [RP], scope: 'notes:read' });
    const page = await authorizeAsUser(new Browser(app.baseUrl), user, authorizeUrl(client, { scope: 'notes:read', state: 'D', response_mode: 'form_post', ...s256() }), 'deny');
    expect(formPostedTo(page, RP)).toEqual({ error: 'access_denied', error_description: expect.any(String), state: 'D', iss: issuer });
  });

  it('a redirect URI that is not registered gets no form and no redirect: an error page for the person, nothing posted anywhere', async () => {
    const page = await new Browser(app.baseUrl).get(authorizeUrl(codeClient, { redirect_uri: 'https://attacker.example/cb', scope: 'notes:read', state: 'X', response_mode: 'form_post', ...s256() }));
    expect(page.status).toBe(400);
    expect(page.location).toBeUndefined();
    expect(page.body).not.toContain('attacker.example');
    expect(page.headers.get('content-security-policy')).not.toContain('attacker.example');
    expect(page.headers.get('content-security-policy')).not.toContain('script-src');
  });
});

function s256(): Record<string, string> {
  return { code_challenge: newPkce().challenge, code_challenge_method: 'S256' };
}
