/**
 * Issue 37: two widely used relying-party libraries as their quick-starts configure them, against
 * the server started as `npm start` starts it, with the person and the clients made by the admin
 * CLI as docs/guides/connect-your-app.md says: sign-in, the application seeing the
 * person's name and email, its session, and sign-out.
 *
 * - express-openid-connect (Auth0) with its defaults: response_type=id_token and
 *   response_mode=form_post; then with response_type=code and sign-out at our end_session_endpoint.
 * - passport-openidconnect with the three-argument verify function of its README.
 */
import type { ChildProcess } from 'node:child_process';
import { freePort } from '../helpers/app-at-issuer.js';
import { runCli } from '../helpers/cli.js';
import { startAsNpmStart, stopServer } from '../helpers/npm-start.js';
import { startRelyingParty, TwoSiteBrowser } from '../helpers/relying-party.js';
import { dropTestDatabase } from '../helpers/test-database.js';

const USER = { username: 'alice', password: 'correct horse battery staple' };
const APP_SECRET = 'a-long-random-secret-for-the-application-session-cookie';

interface Registered {
  client_id: string;
  client_secret: string;
  response_types: string[];
}

/** clients:create, as docs/guides/connect-your-app.md says for each library; the JSON it prints. */
async function registerWithCli(args: string[]): Promise<Registered> {
  const created = await runCli(['clients:create', ...args]);
  expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(created.stdout) as Registered;
}

describe('relying-party libraries in their quick-start configurations, against `npm start` (issue 37)', () => {
  let server: ChildProcess;
  let issuer: URL;
  const apps: ChildProcess[] = [];

  beforeAll(async () => {
    ({ server, issuer } = await startAsNpmStart());
    const created = await runCli(['users:create', '--username', USER.username, '--password', USER.password, '--email', 'alice@example.com', '--name', 'Alice Liddell', '--given-name', 'Alice', '--family-name', 'Liddell']);
    expect(created.code).toBe(0);
  });
  afterAll(async () => {
    for (const app of apps) await stopServer(app);
    await stopServer(server);
    await dropTestDatabase();
  });

  /** Starts the application of test/fixtures/relying-parties/`script` on `port` (the one its registration names). */
  async function serve(script: string, port: number, client: Registered, env: Record<string, string> = {}): Promise<URL> {
    const { app, url } = await startRelyingParty(script, port, { ISSUER: issuer.origin, CLIENT_ID: client.client_id, CLIENT_SECRET: client.client_secret, APP_SECRET, ...env });
    apps.push(app);
    return url;
  }

  describe('express-openid-connect', () => {
    it('with its defaults (response_type=id_token, response_mode=form_post): sign-in, name and email in the app, its session, and sign-out', async () => {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      // What Latchkey needs registered: the callback, and id_token beside the implicit grant (an administrator's choice).
      const client = await registerWithCli(['--name', 'Quick-start app', '--redirect-uri', `${base}/callback`, '--grant-type', 'implicit', '--response-type', 'id_token']);
      expect(client.response_types).toEqual(['id_token']);
      // Only what its README asks for (test/fixtures/relying-parties/express-openid-connect.mjs).
      const url = await serve('express-openid-connect.mjs', port, client);
      const browser = new TwoSiteBrowser(issuer, USER);

      const signIn = await browser.visit(url);
      expect(signIn.hops.map((hop) => `${hop.origin}${hop.pathname}`)).toEqual(expect.arrayContaining([`${issuer.origin}/authorize`, `${issuer.origin}/login`, `${base}/callback`]));
      const authorize = signIn.hops.find((hop) => hop.pathname === '/authorize')!;
      expect(Object.fromEntries(authorize.searchParams)).toMatchObject({ response_type: 'id_token', response_mode: 'form_post', scope: 'openid profile email', nonce: expect.any(String) });
      expect(signIn.page.status).toBe(200);
      expect(JSON.parse(signIn.page.body)).toEqual({ user: expect.objectContaining({ name: 'Alice Liddell', email: 'alice@example.com', preferred_username: USER.username }) });

      // The application's session: the next request is answered at once, with no trip to us.
      const again = await browser.visit(url);
      expect(again.hops).toHaveLength(1);
      expect(JSON.parse(again.page.body).user.name).toBe('Alice Liddell');

      // Its default sign-out ends its own session: the page asks us again.
      const signOut = await browser.site(url).get(`${base}/logout`);
      expect(signOut.status).toBe(302);
      const after = await browser.site(url).get(`${base}/`);
      expect(after.status).toBe(302);
      expect(new URL(after.location!).pathname).toBe('/authorize');
    });

    it('with response_type=code: sign-in with a code and PKCE, name and email in the app, and sign-out at our end_session_endpoint', async () => {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const client = await registerWithCli(['--name', 'Code app', '--redirect-uri', `${base}/callback`, '--post-logout-redirect-uri', base]);
      const url = await serve('express-openid-connect.mjs', port, client, { RESPONSE_TYPE: 'code', IDP_LOGOUT: 'true' });
      const browser = new TwoSiteBrowser(issuer, USER);

      const signIn = await browser.visit(url);
      const authorize = signIn.hops.find((hop) => hop.pathname === '/authorize')!;
      expect(Object.fromEntries(authorize.searchParams)).toMatchObject({ response_type: 'code', code_challenge_method: 'S256' });
      expect(JSON.parse(signIn.page.body)).toEqual({ user: expect.objectContaining({ name: 'Alice Liddell', email: 'alice@example.com' }) });
      expect((await browser.visit(url)).hops).toHaveLength(1);

      // RP-Initiated Logout with the ID token as hint: we sign the person out and send them back.
      const signOut = await browser.visit(`${base}/logout`);
      const endSession = signOut.hops.find((hop) => hop.origin === issuer.origin)!;
      expect(endSession.pathname).toBe('/session/end');
      expect(endSession.searchParams.get('id_token_hint')).toEqual(expect.any(String));
      // Back at the application, which asks us again, and we ask for the password again: both sessions ended.
      expect(signOut.hops.filter((hop) => hop.pathname === '/login')).toHaveLength(1);
      expect(JSON.parse(signOut.page.body).user.name).toBe('Alice Liddell');
    });
    it('for a client created with clients:create --minimal-id-token, the app reads only the ID token\'s sub: the person\'s claims stay at userinfo', async () => {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const client = await registerWithCli(['--name', 'Minimal app', '--redirect-uri', `${base}/callback`, '--minimal-id-token']);
      expect(client).toMatchObject({ id_token_claims: false });
      const url = await serve('express-openid-connect.mjs', port, client, { RESPONSE_TYPE: 'code' });
      const { page } = await new TwoSiteBrowser(issuer, USER).visit(url);
      const { user } = JSON.parse(page.body) as { user: Record<string, unknown> };
      expect(user.sub).toEqual(expect.any(String));
      expect(user).not.toHaveProperty('name');
      expect(user).not.toHaveProperty('email');
    });
  });

  describe('passport-openidconnect', () => {
    it('with the three-argument verify of its README: sign-in, a profile with name and email, the session, and sign-out', async () => {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      // It sends its secret in the token request's body (the oauth package's way): client_secret_post.
      const client = await registerWithCli(['--name', 'Passport app', '--redirect-uri', `${base}/oauth2/redirect`, '--post-logout-redirect-uri', base, '--auth-method', 'client_secret_post']);

      // As its README has it (test/fixtures/relying-parties/passport-openidconnect.mjs).
      const url = await serve('passport-openidconnect.mjs', port, client);
      const browser = new TwoSiteBrowser(issuer, USER);

      expect(JSON.parse((await browser.visit(url)).page.body)).toEqual({ user: null });
      const signIn = await browser.visit(`${base}/login`);
      const authorize = signIn.hops.find((hop) => hop.pathname === '/authorize')!;
      expect(authorize.searchParams.get('response_type')).toBe('code');
      const { user } = JSON.parse(signIn.page.body) as { user: Record<string, unknown> };
      expect(user).toMatchObject({ displayName: 'Alice Liddell', username: USER.username, name: { givenName: 'Alice', familyName: 'Liddell' }, emails: [{ value: 'alice@example.com' }] });

      // The application's session holds the person.
      const again = await browser.visit(url);
      expect(again.hops).toHaveLength(1);
      expect(JSON.parse(again.page.body).user.displayName).toBe('Alice Liddell');

      // Sign-out: the app's session ends, then ours, after the person confirms (the request proves nobody, §2).
      const signOut = await browser.visit(`${base}/logout`);
      expect(signOut.url.pathname).toBe('/session/end');
      const confirmed = await browser.site(issuer).submit(signOut.page, '/session/end/confirm', { decision: 'sign_out' });
      expect(confirmed.status).toBe(303);
      expect(confirmed.location).toBe(`${base}/`);
      expect(JSON.parse((await browser.visit(url)).page.body)).toEqual({ user: null });
      const signInAgain = await browser.visit(`${base}/login`);
      expect(signInAgain.hops.filter((hop) => hop.pathname === '/login' && hop.origin === issuer.origin)).toHaveLength(1);
    });
  });
});
