import { AccountsService } from '../../src/accounts/accounts.service.js';
import { SessionsService } from '../../src/sessions/sessions.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { Browser, isLoginPage } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { authorizeAsUser, authorizeUrl, newPkce, redirectParams, tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';

/**
 * Deprovisioning (issue 46): a deactivated person loses every session and token at once and cannot
 * sign in until reactivated; the account and its data stay. SCIM's `active: false` (scim-*.e2e-spec.ts)
 * and `users:deactivate` both come here (AccountsService.deactivate).
 */
describe('deactivating a person', () => {
  let app: TestApp;
  let client: RegisteredClient;

  beforeAll(async () => {
    app = await TestApp.start();
    client = await app.createClient({ name: 'Notes', scope: 'notes:read offline_access', grantTypes: ['authorization_code', 'refresh_token'] });
  });
  afterAll(async () => app?.stop());

  const cli = async (...args: string[]) => {
    const result = await runCli(args);
    if (result.code !== 0) throw new Error(`${args[0]} failed: ${result.stderr}`);
    return JSON.parse(result.stdout) as Record<string, unknown>;
  };
  const apiStatus = async (token: string) => (await fetch(app.url('/api/v1/notes'), { headers: { authorization: `Bearer ${token}` } })).status;
  const count = async (sql: string, parameters: unknown[]) => Number(((await app.dataSource.query(sql, parameters)) as { n: number | string }[])[0].n);
  const p = (n: number) => (app.dataSource.options.type === 'postgres' ? `$${n}` : '?');

  async function codeFor(browser: Browser, user: TestUser, scope: string): Promise<{ code: string; verifier: string }> {
    const pkce = newPkce();
    const page = await authorizeAsUser(browser, user, authorizeUrl(client, { scope, code_challenge: pkce.challenge, code_challenge_method: 'S256' }));
    return { code: redirectParams(page).get('code')!, verifier: pkce.verifier };
  }
  const redeem = ({ code, verifier }: { code: string; verifier: string }) => tokenRequest(app, client, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: client.redirectUri });

  it('ends the sessions, revokes every token (offline ones too) and unredeemed codes, refuses every sign-in, and keeps the account', async () => {
    const user = await app.createUser();
    const browser = new Browser(app.baseUrl);
    const offline = await redeem(await codeFor(browser, user, 'notes:read offline_access'));
    const online = await redeem(await codeFor(browser, user, 'notes:read'));
    const pending = await codeFor(browser, user, 'notes:read');
    expect([offline.status, online.status]).toEqual([200, 200]);
    expect(await apiStatus(String(offline.body.access_token))).toBe(200);
    const person = (await app.app.get(UsersService).findByUsername(user.username))!;

    const result = await app.app.get(AccountsService).deactivate(person.id, 'test');
    expect(result).toEqual({ sessionsEnded: 1, tokensRevoked: 4 });

    expect(await apiStatus(String(offline.body.access_token))).toBe(401);
    expect(await apiStatus(String(online.body.access_token))).toBe(401);
    const refreshed = await tokenRequest(app, client, { grant_type: 'refresh_token', refresh_token: String(offline.body.refresh_token) });
    expect([refreshed.status, refreshed.body.error]).toEqual([400, 'invalid_grant']);
    const late = await redeem(pending);
    expect([late.status, late.body.error]).toEqual([400, 'invalid_grant']);
    // The browser's session ended: the next request asks for a sign-in, which is refused as a wrong password is.
    const again = await browser.get(authorizeUrl(client, { scope: 'notes:read' }));
    expect(isLoginPage(again)).toBe(true);
    const stranger = new Browser(app.baseUrl);
    const refused = await stranger.submit(await stranger.get('/login'), '/login', { username: user.username, password: user.password });
    expect(refused.status).toBe(401);
    // Even a sign-in that checked the password before the deactivation committed starts no session.
    expect(await app.app.get(SessionsService).start(person.id, { ip: '127.0.0.1', device: 'curl' })).toBeNull();

    expect(await count(`SELECT COUNT(*) AS n FROM users WHERE id = ${p(1)}`, [person.id])).toBe(1);
    expect(await count(`SELECT COUNT(*) AS n FROM tokens WHERE user_id = ${p(1)} AND revoked_at IS NULL`, [person.id])).toBe(0);
    expect(await count(`SELECT COUNT(*) AS n FROM audit_events WHERE action = 'user.deactivated' AND subject = ${p(1)}`, [`user:${person.id}`])).toBe(1);
  });

  it('users:deactivate and users:reactivate: the person signs in again after, and old tokens stay revoked', async () => {
    const user = await app.createUser();
    const browser = new Browser(app.baseUrl);
    const tokens = await redeem(await codeFor(browser, user, 'notes:read'));
    expect(await cli('users:deactivate', '--username', user.username)).toEqual({ username: user.username, active: false, sessions_ended: 1, tokens_revoked: 2 });
    expect(await cli('users:show', '--username', user.username)).toMatchObject({ username: user.username, active: false });
    expect(await cli('users:reactivate', '--username', user.username)).toEqual({ username: user.username, active: true });
    const back = await redeem(await codeFor(new Browser(app.baseUrl), user, 'notes:read'));
    expect(back.status).toBe(200);
    expect(await apiStatus(String(back.body.access_token))).toBe(200);
    expect(await apiStatus(String(tokens.body.access_token))).toBe(401);
  });

  it('refuses an unknown person with a clear error and changes nothing', async () => {
    const before = await count('SELECT COUNT(*) AS n FROM audit_events', []);
    expect(await runCli(['users:deactivate', '--username', 'nobody-here'])).toMatchObject({ code: 1, stderr: expect.stringContaining('No user named "nobody-here"') });
    await expect(app.app.get(AccountsService).deactivate('not-a-uuid', 'test')).rejects.toMatchObject({ code: 'user_not_found' });
    expect(await count('SELECT COUNT(*) AS n FROM audit_events', [])).toBe(before);
  });
});
