import { AuditService } from '../../src/audit/audit.service.js';
import { Browser } from '../helpers/browser.js';
import { authorizeAsUser, authorizeUrl, newPkce, redirectParams, tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';

/**
 * The access page (issue #4): a person sees which applications hold access and withdraws it, like a
 * browser would. Since issue 48 it is the account page's "Applications with access" section:
 * /account/access sends there.
 */
describe('withdrawing access on the account page (formerly /account/access)', () => {
  let app: TestApp;
  let user: TestUser;
  let browser: Browser;
  let photoApp: RegisteredClient;
  let noteApp: RegisteredClient;

  beforeAll(async () => {
    app = await TestApp.start();
    user = await app.createUser();
    photoApp = await app.createClient({ name: 'Photo <App>', scope: 'notes:read photos:read' });
    noteApp = await app.createClient({ name: 'Note App', scope: 'notes:read notes:write' });
  });
  afterAll(async () => app?.stop());

  /** Code → tokens for a client, through the signed-in browser (consent given or remembered). */
  async function tokensFor(client: RegisteredClient, scope: string): Promise<{ access: string; refresh: string }> {
    const pkce = newPkce();
    const page = await authorizeAsUser(browser, user, authorizeUrl(client, { scope, code_challenge: pkce.challenge, code_challenge_method: 'S256' }));
    const code = redirectParams(page).get('code')!;
    const result = await tokenRequest(app, client, { grant_type: 'authorization_code', code, code_verifier: pkce.verifier, redirect_uri: client.redirectUri });
    expect(result.status).toBe(200);
    return { access: result.body.access_token as string, refresh: result.body.refresh_token as string };
  }

  const apiStatus = async (token: string) => (await fetch(app.url('/api/v1/notes'), { headers: { authorization: `Bearer ${token}` } })).status;

  it('asks a signed-out visitor to sign in, then comes back to the page', async () => {
    browser = new Browser(app.baseUrl);
    expect(await browser.get('/account/access')).toMatchObject({ status: 303, location: '/account#applications' });
    expect(await browser.get('/account')).toMatchObject({ status: 303, location: '/login?return_to=%2Faccount' });
    const page = await browser.get('/login?return_to=%2Faccount');
    expect(page.status).toBe(200);
    expect(page.body).toContain('action="/login"');
    expect(page.body).toContain('<input type="hidden" name="return_to" value="/account">');
    const afterLogin = await browser.submit(page, '/login', { username: user.username, password: user.password });
    expect(afterLogin.status).toBe(303);
    expect(afterLogin.location).toBe('/account');
    const empty = await browser.get('/account');
    expect(empty.body).toContain('No application has access to your data.');
    expect(empty.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });

  it('lists each application with its scopes in words, and withdraws one: its tokens and pending codes die, the other keeps working', async () => {
    const photo = await tokensFor(photoApp, 'notes:read photos:read');
    const note = await tokensFor(noteApp, 'notes:read');
    // A code issued but not yet redeemed when access is withdrawn.
    const pkce = newPkce();
    const pending = redirectParams(await authorizeAsUser(browser, user, authorizeUrl(photoApp, { scope: 'notes:read', code_challenge: pkce.challenge, code_challenge_method: 'S256' }))).get('code')!;

    const page = await browser.get('/account');
    expect(page.status).toBe(200);
    expect(page.body).toContain('Photo &lt;App&gt;');
    expect(page.body).toContain('Note App');
    expect(page.body).toContain('See your photos');
    expect(page.body).toMatch(/last active \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/);
    expect(page.body).toContain(`<input type="hidden" name="client_id" value="${photoApp.clientId}">`);

    const withdrawn = await browser.post('/account/access/withdraw', { csrf_token: csrfOf(page.body), client_id: photoApp.clientId });
    expect(withdrawn.status).toBe(303);
    expect(withdrawn.location).toBe(`/account?done=withdrawn&client=${photoApp.clientId}#applications`);
    const after = await browser.get(withdrawn.location!);
    expect(after.body).toContain('<strong>Photo &lt;App&gt;</strong> no longer has access to your data.');
    expect(after.body).not.toContain(`value="${photoApp.clientId}"`);
    expect(after.body).toContain(`value="${noteApp.clientId}"`);

    expect(await apiStatus(photo.access)).toBe(401);
    expect((await tokenRequest(app, photoApp, { grant_type: 'refresh_token', refresh_token: photo.refresh })).body.error).toBe('invalid_grant');
    expect((await tokenRequest(app, photoApp, { grant_type: 'authorization_code', code: pending, code_verifier: pkce.verifier, redirect_uri: photoApp.redirectUri })).body.error).toBe('invalid_grant');
    expect(await apiStatus(note.access)).toBe(200);

    // Both the consent and its withdrawal are in the audit trail, by the person.
    const trail = (await app.app.get(AuditService).list(100))
      .filter((e) => e.subject === `client:${photoApp.clientId}` && e.action.startsWith('consent.'))
      .map((e) => [e.actor, e.action]);
    expect(trail[0]).toEqual([expect.stringMatching(/^user:/), 'consent.withdrawn']);
    expect(trail).toContainEqual([trail[0][0], 'consent.given']);

    // The consent is gone too: the next authorization asks again.
    const again = await browser.get(authorizeUrl(photoApp, { scope: 'notes:read', code_challenge: newPkce().challenge, code_challenge_method: 'S256' }));
    expect(again.status).toBe(200);
    expect(again.body).toContain('action="/consent"');
  });

  it('refuses a withdrawal without the CSRF token, or from another site, and changes nothing', async () => {
    const note = await tokensFor(noteApp, 'notes:read');
    const noToken = await browser.post('/account/access/withdraw', { client_id: noteApp.clientId });
    expect(noToken.status).toBe(403);
    const page = await browser.get('/account');
    const crossSite = await browser.post('/account/access/withdraw', { csrf_token: csrfOf(page.body), client_id: noteApp.clientId }, { 'sec-fetch-site': 'cross-site' });
    expect(crossSite.status).toBe(403);
    expect(await apiStatus(note.access)).toBe(200);
  });

  it('answers 404 for an application that holds no access, and never echoes text from the URL', async () => {
    const page = await browser.get('/account');
    const unknown = await browser.post('/account/access/withdraw', { csrf_token: csrfOf(page.body), client_id: photoApp.clientId });
    expect(unknown.status).toBe(404);
    // The old page's link, and the new page's own query: a name is looked up by id, never shown from the URL.
    const old = await browser.get('/account/access?withdrawn=Your%20bank');
    expect(old.status).toBe(303);
    for (const spoof of [await browser.get(old.location!), await browser.get('/account?done=withdrawn&client=Your%20bank')]) {
      expect(spoof.status).toBe(200);
      expect(spoof.body).not.toContain('Your bank');
      expect(spoof.body).not.toContain('no longer has access');
    }
  });
});

function csrfOf(html: string): string {
  const match = /<input type="hidden" name="csrf_token" value="([^"]+)">/.exec(html);
  if (!match) throw new Error(`No CSRF token on the page:\n${html}`);
  return match[1];
}
