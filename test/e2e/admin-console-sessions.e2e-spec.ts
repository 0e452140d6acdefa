/**
 * Issue 48, the admin console's sessions: kept in a sealed cookie any instance opens, made real by
 * the tokens inside it. Sign-out revokes them (every copy of the cookie is refused, on every
 * instance) and signs out of the server too; a removed role closes the console at the next request;
 * idle and old sessions end; a dangerous action asks for a new sign-in first. Also: a failed
 * sign-in in the dashboard and the audit log, and paging. Two instances of the real app, one database.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { DataSource } from 'typeorm';
import { AdminRolesService } from '../../src/admin/admin-roles.service.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { tableSnapshot } from '../helpers/admin-api.js';
import { CONSOLE_COOKIE, consoleCsrf, consolePerson, followSignIn, headingOf, signInWithNewBrowser, startConsoleApp, stopConsoleApp, type ConsolePerson } from '../helpers/admin-console.js';
import { startAnotherInstance } from '../helpers/app-at-issuer.js';
import { Browser, hiddenFields, isLoginPage, type Page } from '../helpers/browser.js';
import { MovableClock } from '../helpers/movable-clock.js';

describe('the admin console: sessions, sign-out and re-authentication (issue 48)', () => {
  let nest: NestFastifyApplication;
  let other: { nest: NestFastifyApplication; baseUrl: string };
  let issuer: URL;
  let db: DataSource;
  const clock = new MovableClock();

  beforeAll(async () => {
    ({ nest, issuer, db } = await startConsoleApp(clock));
    other = await startAnotherInstance();
    clock.attachTo(other.nest);
  });
  afterAll(async () => {
    await other?.nest.close();
    await stopConsoleApp(nest);
  });

  const signIn = (person: ConsolePerson, origin = issuer.origin) => signInWithNewBrowser(origin, person, clock);
  const isSignInRedirect = (page: Page) => page.status === 303 && /^\/admin\/sign-in\?/.test(page.location ?? '');
  const liveConsoleTokens = async (userId: string) =>
    ((await db.query(`SELECT "id", "revoked_at", "expires_at" FROM "tokens" WHERE "client_id" = 'latchkey-admin-console' AND "user_id" = '${userId}'`)) as { revoked_at: unknown }[]).filter((row) => row.revoked_at === null).length;

  it('signs in on either instance with the same derived client secret: no instance rotates it', async () => {
    const owner = await consolePerson(nest, ['owner']);
    expect((await signIn(owner)).page.status).toBe(200);
    expect((await signIn(owner, other.baseUrl)).page.status).toBe(200);
    expect(await db.query(`SELECT "id" FROM "audit_events" WHERE "action" = 'client.secret_rotated' AND "subject" = 'client:latchkey-admin-console'`)).toEqual([]);
  });

  it('sign-out revokes the console tokens, so a copy of the cookie is refused on every instance, and signs out of the server too', async () => {
    const owner = await consolePerson(nest, ['owner']);
    const { browser, page } = await signIn(owner);
    const copy = browser.copy();
    const copyElsewhere = browser.copy(other.baseUrl);
    expect((await copyElsewhere.get('/admin')).status).toBe(200);
    expect(await liveConsoleTokens(owner.userId)).toBeGreaterThan(0);

    const out = await browser.submit(page, '/admin/sign-out');
    expect(out.status).toBe(303);
    expect(out.headers.getSetCookie().some((line) => line.startsWith(`${CONSOLE_COOKIE}=;`))).toBe(true);
    const endSession = new URL(out.location!);
    expect(endSession.pathname).toBe('/session/end');
    expect(endSession.searchParams.get('post_logout_redirect_uri')).toBe(`${issuer.origin}/admin/signed-out`);
    const back = await browser.get(out.location!);
    expect(back.location).toBe(`${issuer.origin}/admin/signed-out`);
    expect(headingOf(await browser.get(back.location!))).toBe('You are signed out');

    expect(await liveConsoleTokens(owner.userId)).toBe(0);
    expect(isSignInRedirect(await copy.get('/admin'))).toBe(true);
    expect(isSignInRedirect(await copyElsewhere.get('/admin'))).toBe(true);
    expect(isLoginPage(await browser.get('/login'))).toBe(true);
  });

  it('closes the console at the next request once the administrator loses their role', async () => {
    const clientAdmin = await consolePerson(nest, ['client-admin']);
    const { browser } = await signIn(clientAdmin);
    expect((await browser.get('/admin/clients')).status).toBe(200);
    await nest.get(AdminRolesService).revoke(clientAdmin.userId, 'client-admin', 'cli');
    const refused = await browser.get('/admin/clients');
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('Not an administrator');
    expect(await liveConsoleTokens(clientAdmin.userId)).toBe(0);
    expect(isSignInRedirect(await browser.get('/admin'))).toBe(true);
  });

  it('ends a session left idle longer than ADMIN_CONSOLE_IDLE_SECONDS, and its tokens with it', async () => {
    const owner = await consolePerson(nest, ['owner']);
    const { browser } = await signIn(owner);
    clock.advance(14 * 60_000);
    expect((await browser.get('/admin')).status).toBe(200);
    clock.advance(16 * 60_000);
    expect(isSignInRedirect(await browser.get('/admin'))).toBe(true);
    expect(await liveConsoleTokens(owner.userId)).toBe(0);
  });

  it('sends a dangerous action without a recent sign-in to sign in again, changing nothing; after it, the action is done', async () => {
    const owner = await consolePerson(nest, ['owner']);
    const { client } = await nest.get(ClientsService).create({ name: 'Old app', redirectUris: ['https://old.example/cb'], scope: 'notes:read' });
    const { browser } = await signIn(owner);
    clock.advance(6 * 60_000);
    const confirmation = `/admin/clients/${client.id}/confirm/delete`;
    const confirm = await browser.get(confirmation);
    expect(confirm.body).toContain('id="reauth-note"');
    const before = await tableSnapshot(db, ['clients', 'signing_keys']);
    const refused = await browser.submit(confirm, `/admin/clients/${client.id}/delete`);
    expect(refused.status).toBe(303);
    expect(refused.location).toBe(`/admin/sign-in?${new URLSearchParams({ return_to: confirmation, reauthenticate: '1' })}`);
    const keys = await browser.post('/admin/keys/rotation', { csrf_token: consoleCsrf(confirm) });
    expect(keys.location).toBe(`/admin/sign-in?${new URLSearchParams({ return_to: '/admin/keys/confirm', reauthenticate: '1' })}`);
    expect(await tableSnapshot(db, ['clients', 'signing_keys'])).toBe(before);

    // The new sign-in is asked for even though the server's session is live (prompt=login, max_age=0).
    const authorize = await browser.get(refused.location!);
    expect(Object.fromEntries(new URL(authorize.location!).searchParams)).toMatchObject({ prompt: 'login', max_age: '0' });
    clock.advance(30_000);
    const login = await browser.get(authorize.location!);
    expect(isLoginPage(login)).toBe(true);
    const again = await followSignIn(browser, login, owner, clock.now);
    expect(headingOf(again)).toBe('Delete the client');
    expect(again.body).not.toContain('id="reauth-note"');
    const done = await browser.submit(again, `/admin/clients/${client.id}/delete`);
    expect(done).toMatchObject({ status: 303, location: '/admin/clients' });
    expect(await nest.get(ClientsService).findById(client.id)).toBeNull();
    expect((await browser.get('/admin/clients')).body).toContain('Old app was deleted.');

    // Within the window, the keys rotate at once.
    const keysBefore = (await db.query('SELECT "kid" FROM "signing_keys"')).length;
    const rotate = await browser.get('/admin/keys/confirm');
    expect(rotate.body).not.toContain('id="reauth-note"');
    const rotated = await browser.submit(rotate, '/admin/keys/rotation');
    expect(rotated).toMatchObject({ status: 303, location: '/admin/keys' });
    expect((await db.query('SELECT "kid" FROM "signing_keys"')).length).toBeGreaterThan(keysBefore);
    expect((await browser.get('/admin/keys')).body).toContain('New keys published');
  });

  it('shows a failed sign-in on the dashboard and finds it in the audit log by event and person', async () => {
    const auditor = await consolePerson(nest, ['auditor']);
    const victim = await nest.get(UsersService).create(`victim_${Date.now()}`, 'the right password');
    const guesser = new Browser(issuer.origin);
    const login = await guesser.get('/login');
    expect((await guesser.post('/login', { ...hiddenFields(login.body, '/login'), username: victim.username, password: 'a wrong guess' })).status).toBe(401);
    for (let tries = 0; tries < 50 && (await db.query(`SELECT 1 FROM "audit_events" WHERE "action" = 'user.sign_in_failed' AND "subject" = 'user:${victim.id}'`)).length === 0; tries++) await new Promise((resolve) => setTimeout(resolve, 20));
    const { browser, page } = await signIn(auditor);
    expect(page.body).toContain(`href="/admin/people/${victim.id}">${victim.username}</a>`);
    const found = await browser.get(`/admin/audit?event=user.sign_in_failed&person=${victim.id}`);
    expect(found.status).toBe(200);
    expect(found.body).toContain('wrong_password');
    const bad = await browser.get('/admin/audit?since=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body).toContain('since must be an RFC 3339 date-time');
  });

  it('pages the people list forwards, with a way back to the first page', async () => {
    const owner = await consolePerson(nest, ['owner']);
    for (let i = 0; i < 27; i++) await nest.get(UsersService).create(`paged_${String(i).padStart(2, '0')}`, 'correct horse battery staple');
    const { browser } = await signIn(owner);
    const first = await browser.get('/admin/people?q=paged_');
    expect(first.body).toContain('paged_00');
    const next = /href="(\/admin\/people\?q=paged_&amp;cursor=[^"]+)">Next page/.exec(first.body)?.[1].replace(/&amp;/g, '&');
    expect(next).toBeDefined();
    const second = await browser.get(next!);
    expect(second.body).toContain('paged_26');
    expect(second.body).not.toContain('paged_00');
    expect(second.body).toContain('href="/admin/people?q=paged_">First page');
  });
});
