/**
 * Issue 48, the admin console: who may use it and what each role may do there, decided by the
 * admin API (AdminAccess) that every page calls with the administrator's own token; forms that
 * need the console's CSRF token and come from its own pages (Fetch Metadata); a new client's secret
 * shown once. The real app on a real port, at its issuer (the console's redirect URI is under it).
 * Sessions, sign-out and re-authentication: admin-console-sessions.e2e-spec.ts.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { RequestMethod } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants.js';
import type { DataSource } from 'typeorm';
import { CONSOLE_CONTROLLERS } from '../../src/admin-console/admin-console.module.js';
import { SecondFactors } from '../../src/factors/second-factors.service.js';
import { InstanceHeartbeat } from '../../src/housekeeping/instance-heartbeat.js';
import { InstanceStore } from '../../src/instances/instance.store.js';
import { SESSION_COOKIE_USE, SessionCookieUse } from '../../src/http/cookie-forms.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { tableSnapshot } from '../helpers/admin-api.js';
import { consoleCsrf, consolePerson, fieldProblemOn, headingOf, secretShownOn, signInToConsole, signInWithNewBrowser, startConsoleApp, stopConsoleApp, type ConsolePerson } from '../helpers/admin-console.js';
import { basicAuth } from '../helpers/oauth-flow.js';
import { Browser } from '../helpers/browser.js';
import { MovableClock } from '../helpers/movable-clock.js';

const FACTOR_TABLES = ['totp_factors', 'recovery_codes', 'passkeys', 'users', 'admin_roles'];

describe('the admin console: roles, forms and secrets (issue 48)', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  let db: DataSource;
  const clock = new MovableClock();

  beforeAll(async () => {
    ({ nest, issuer, db } = await startConsoleApp(clock));
  });
  afterAll(() => stopConsoleApp(nest));

  const signIn = (person: ConsolePerson, path = '/admin') => signInWithNewBrowser(issuer.origin, person, clock, path);
  const auditRows = (action: string, subject: string) => db.query(`SELECT "actor", "ip" FROM "audit_events" WHERE "action" = '${action}' AND "subject" = '${subject}'`) as Promise<{ actor: string; ip: string | null }[]>;

  it('sends someone signed out to sign in with a second factor and every admin scope, then back to the page they asked for', async () => {
    const owner = await consolePerson(nest, ['owner']);
    const browser = new Browser(issuer.origin);
    const start = await browser.get('/admin/people?q=x');
    expect(start.status).toBe(303);
    expect(start.location).toBe('/admin/sign-in?return_to=%2Fadmin%2Fpeople%3Fq%3Dx');
    const authorize = await browser.get(start.location!);
    const request = new URL(authorize.location!);
    expect(`${request.origin}${request.pathname}`).toBe(`${issuer.origin}/authorize`);
    expect(Object.fromEntries(request.searchParams)).toMatchObject({
      client_id: 'latchkey-admin-console',
      redirect_uri: `${issuer.origin}/admin/callback`,
      response_type: 'code',
      scope: 'openid admin:read admin:people admin:clients admin:owner',
      acr_values: 'urn:latchkey:acr:mfa',
      code_challenge_method: 'S256',
    });
    clock.advance(30_000);
    const page = await signInToConsole(browser, owner, clock.now, '/admin/people?q=x');
    expect(page.status).toBe(200);
    expect(headingOf(page)).toBe('People');
    // Registered on first use: confidential, its redirect URI under the issuer, a second factor as its floor.
    const client = await nest.get(ClientsService).findById('latchkey-admin-console');
    expect(client).toMatchObject({ redirectUris: [`${issuer.origin}/admin/callback`], minimumAcr: 'urn:latchkey:acr:mfa', tokenEndpointAuthMethod: 'client_secret_basic' });
  });

  it('requires a second factor of an administrator: one without is taken to set it up before the console opens', async () => {
    const owner = await consolePerson(nest, ['owner'], false);
    const { page } = await signIn(owner);
    expect(page.body).toContain('action="/account/one-time-codes"');
  });

  it('gives a person without an administrator role a 403 page, closes their console session, and changes nothing', async () => {
    const target = await consolePerson(nest, []);
    const nobody = await consolePerson(nest, []);
    const { browser, page } = await signIn(nobody);
    expect(page.status).toBe(403);
    expect(page.body).toContain('Not an administrator');
    // Taken after their sign-in, which used their one-time code.
    const before = await tableSnapshot(db, FACTOR_TABLES);
    const refused = await browser.post(`/admin/people/${target.userId}/reset-factors`, { csrf_token: 'anything' });
    expect(refused.status).toBe(303);
    expect(refused.location).toMatch(/^\/admin\/sign-in\?/);
    expect(await tableSnapshot(db, FACTOR_TABLES)).toBe(before);
    expect(await nest.get(SecondFactors).hasSecondFactor(target.userId)).toBe(true);
  });

  it('shows the instances seen on the dashboard, to a help desk too: a table with its caption and headers, which are live and how many', async () => {
    const helpdesk = await consolePerson(nest, ['helpdesk']);
    const { browser } = await signIn(helpdesk);
    // This instance beats at the test's clock; another one stopped answering ten minutes ago.
    await nest.get(InstanceHeartbeat).beat();
    const gone = { id: randomUUID(), hostname: 'worker-gone', pid: 4242, version: '0.0.9', node: '24.0.0', heartbeatSeconds: 30 };
    await nest.get(InstanceStore).record({ ...gone, startedAt: new Date(clock.now().getTime() - 3_600_000), lastSeenAt: new Date(clock.now().getTime() - 600_000) });

    const page = await browser.get('/admin');
    expect(page.status).toBe(200);
    const section = page.body.slice(page.body.indexOf('<h2 id="instances-title">Instances</h2>'), page.body.indexOf('<h2 id="counts-title">'));
    expect(section).toContain('<caption>Server instances seen in the last 24 hours, the latest started first</caption>');
    expect(section).toContain('<thead><tr><th scope="col">Host</th><th scope="col">Version</th><th scope="col">Started</th><th scope="col">Last seen</th><th scope="col">Status</th></tr></thead>');
    expect(section).toContain('<p id="instances-live"><strong>1</strong> of 2 live</p>');
    const row = (host: string) => new RegExp(`<tr>\\s*<th scope="row">${host} [\\s\\S]*?</tr>`).exec(section)?.[0] ?? '';
    const own = row(hostname());
    expect(own).toContain(`pid ${process.pid}</span> <span class="badge muted">this instance</span>`);
    expect(own).toContain('<span class="badge ok">live</span>');
    expect(row('worker-gone')).toContain('>10 min ago</time>');
    expect(row('worker-gone')).toContain('<span class="badge bad">not responding</span>');
    expect(row('worker-gone')).toContain('0.0.9 <span class="hint">Node.js 24.0.0</span>');
    await nest.get(InstanceStore).remove(gone.id);
  });

  it("shows the last 24 hours' figures on the dashboard, to a help desk too: a wrong password moves the failed sign-ins by one", async () => {
    const helpdesk = await consolePerson(nest, ['helpdesk']);
    const person = await consolePerson(nest, [], false);
    const { browser } = await signIn(helpdesk);
    /** The section's figures, by label. */
    const figures = (html: string) => {
      const section = html.slice(html.indexOf('<h2 id="last-day-title">'), html.indexOf('<h2 id="failures-title">'));
      return Object.fromEntries([...section.matchAll(/<li><span class="number">(\d+)<\/span> <span class="label">([^<]+)<\/span><\/li>/g)].map((m) => [m[2], Number(m[1])]));
    };
    const page = await browser.get('/admin');
    expect(page.body).toMatch(/<h2 id="last-day-title">In the last 24 hours<\/h2>\s*<ul class="cards" aria-labelledby="last-day-title">/);
    const before = figures(page.body);
    expect(Object.keys(before)).toEqual(['sign-ins', 'failed sign-ins', 'sign-ins from a new device', 'consents given', 'consents withdrawn']);
    expect(before['sign-ins']).toBeGreaterThanOrEqual(1);

    const guesser = new Browser(issuer.origin);
    const login = await guesser.get('/login');
    await guesser.submit(login, '/login', { username: person.username, password: 'not the password' });
    // Recorded after the answer (FailedSignIns.note): wait for the row.
    for (let tries = 0; tries < 100 && (await auditRows('user.sign_in_failed', `user:${person.userId}`)).length === 0; tries++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(figures((await browser.get('/admin')).body)).toEqual({ ...before, 'failed sign-ins': before['failed sign-ins'] + 1 });
  });

  it('lets a help desk find a person and reset their factors, audited with who and from where; the clients pages refuse it, and change nothing', async () => {
    const helpdesk = await consolePerson(nest, ['helpdesk']);
    const target = await consolePerson(nest, []);
    const { browser, page } = await signIn(helpdesk);
    expect(page.body).toContain('href="/admin/people"');
    expect(page.body).not.toContain('href="/admin/clients"');
    const list = await browser.get(`/admin/people?q=${target.username}`);
    expect(list.body).toContain(`href="/admin/people/${target.userId}"`);
    const confirm = await browser.get(`/admin/people/${target.userId}/confirm/reset-factors`);
    expect(headingOf(confirm)).toBe('Reset second factors');
    const done = await browser.submit(confirm, `/admin/people/${target.userId}/reset-factors`);
    expect(done).toMatchObject({ status: 303, location: `/admin/people/${target.userId}` });
    expect((await browser.get(done.location!)).body).toContain(`Second factors of ${target.username} removed`);
    expect(await nest.get(SecondFactors).hasSecondFactor(target.userId)).toBe(false);
    expect(await auditRows('factor.removed', `user:${target.userId}`)).toEqual([{ actor: `user:${helpdesk.userId}`, ip: '127.0.0.1' }]);

    const { client } = await nest.get(ClientsService).create({ name: 'Payroll', redirectUris: ['https://payroll.example/cb'], scope: 'notes:read' });
    const clientsBefore = await tableSnapshot(db, ['clients']);
    expect((await browser.get('/admin/clients')).status).toBe(403);
    const csrf = consoleCsrf(await browser.get('/admin'));
    const create = await browser.post('/admin/clients', { csrf_token: csrf, client_name: 'Sneaky', client_type: 'confidential', grant_types: 'client_credentials' });
    expect(create.status).toBe(403);
    expect(create.body).toContain('Not allowed');
    const rotate = await browser.post(`/admin/clients/${client.id}/rotate-secret`, { csrf_token: csrf });
    expect(rotate.status).toBe(403);
    expect(await tableSnapshot(db, ['clients'])).toBe(clientsBefore);
  });

  it('lets an owner register a client and see its secret once: a reload does not show it, and the secret works', async () => {
    const owner = await consolePerson(nest, ['owner']);
    const { browser } = await signIn(owner);
    const form = await browser.get('/admin/clients/new');
    expect(headingOf(form)).toBe('Register a client');
    const created = await browser.submit(form, '/admin/clients', { client_name: 'Reports robot', client_type: 'confidential', grant_types: 'client_credentials', scope: 'notes:read', redirect_uris: '' });
    expect(created.status).toBe(303);
    const clientId = decodeURIComponent(created.location!.replace('/admin/clients/', ''));
    const shown = await browser.get(created.location!);
    expect(shown.headers.get('cache-control')).toBe('no-store');
    const secret = secretShownOn(shown);
    expect(secret).toMatch(/^lk_cs_/);
    expect(shown.headers.get('content-security-policy')).toContain("script-src 'self'");
    const reloaded = await browser.get(created.location!);
    expect(reloaded.status).toBe(200);
    expect(secretShownOn(reloaded)).toBeUndefined();
    expect(reloaded.body).not.toContain(secret);
    const token = await fetch(`${issuer.origin}/token`, { method: 'POST', headers: { authorization: basicAuth(clientId, secret!), 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials&scope=notes%3Aread' });
    expect(token.status).toBe(200);
    expect(await auditRows('client.registered', `client:${clientId}`)).toEqual([{ actor: `user:${owner.userId}`, ip: '127.0.0.1' }]);

    // A rotation: the new secret shown once, the old one refused from now on.
    const rotate = await browser.get(`/admin/clients/${encodeURIComponent(clientId)}/confirm/rotate-secret`);
    expect(headingOf(rotate)).toBe('Rotate the secret');
    const rotated = await browser.get((await browser.submit(rotate, `/admin/clients/${encodeURIComponent(clientId)}/rotate-secret`)).location!);
    const fresh = secretShownOn(rotated);
    expect(fresh).toMatch(/^lk_cs_/);
    expect(fresh).not.toBe(secret);
    expect(secretShownOn(await browser.get(created.location!))).toBeUndefined();
    const withSecret = (value: string) => fetch(`${issuer.origin}/token`, { method: 'POST', headers: { authorization: basicAuth(clientId, value), 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials&scope=notes%3Aread' });
    expect((await withSecret(secret!)).status).toBe(401);
    expect((await withSecret(fresh!)).status).toBe(200);
  });

  it('lets a help desk lock and unlock a person (their sessions end), but not an owner: the API says why', async () => {
    const helpdesk = await consolePerson(nest, ['helpdesk']);
    const target = await consolePerson(nest, []);
    const owner = await consolePerson(nest, ['owner']);
    const { browser } = await signIn(helpdesk);
    const lock = await browser.get(`/admin/people/${target.userId}/confirm/lock`);
    const locked = await browser.submit(lock, `/admin/people/${target.userId}/lock`);
    expect(locked).toMatchObject({ status: 303, location: `/admin/people/${target.userId}` });
    const page = await browser.get(locked.location!);
    expect(page.body).toContain(`${target.username} is locked`);
    expect((await nest.get(UsersService).findById(target.userId))?.active).toBe(false);
    const unlocked = await browser.submit(page, `/admin/people/${target.userId}/unlock`);
    expect(unlocked.status).toBe(303);
    expect((await nest.get(UsersService).findById(target.userId))?.active).toBe(true);

    const before = await tableSnapshot(db, FACTOR_TABLES);
    const refused = await browser.submit(await browser.get(`/admin/people/${owner.userId}/confirm/lock`), `/admin/people/${owner.userId}/lock`);
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('owner');
    expect(await tableSnapshot(db, FACTOR_TABLES)).toBe(before);
  });

  it("shows a person's sessions with the device and address each was started from", async () => {
    const helpdesk = await consolePerson(nest, ['helpdesk']);
    const target = await consolePerson(nest, [], false);
    const laptop = new Browser(issuer.origin, { 'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0' });
    expect((await laptop.submit(await laptop.get('/login'), '/login', { username: target.username, password: target.password })).status).toBe(303);
    const { browser } = await signIn(helpdesk);
    const page = await browser.get(`/admin/people/${target.userId}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('<th scope="col">Device</th><th scope="col">Address</th>');
    expect(page.body).toMatch(/<td>Firefox on Windows<\/td>\s*<td>127\.0\.0\.1<\/td>/);
    expect(page.body).toMatch(/aria-label="End the session started [^"]+ on Firefox on Windows"/);
  });

  it("shows the API's refusal on the form, keeping what was typed, and registers nothing", async () => {
    const owner = await consolePerson(nest, ['owner']);
    const { browser } = await signIn(owner);
    const before = await tableSnapshot(db, ['clients']);
    const form = await browser.get('/admin/clients/new');
    const refused = await browser.submit(form, '/admin/clients', { client_name: 'Plain http', client_type: 'confidential', grant_types: 'authorization_code', redirect_uris: 'http://app.example/cb' });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('role="alert"');
    expect(refused.body).toMatch(/must use https/);
    expect(refused.body).toContain('value="Plain http"');
    expect(await tableSnapshot(db, ['clients'])).toBe(before);
  });

  it('shows what the registration form gets wrong beside its field (a refused redirect URI, an unknown scope, what is missing), linked from the summary, keeping what was typed', async () => {
    const owner = await consolePerson(nest, ['owner']);
    const { browser } = await signIn(owner);
    const before = await tableSnapshot(db, ['clients']);
    const form = await browser.get('/admin/clients/new');
    const typed = { client_name: 'Shop', client_type: 'public', grant_types: 'authorization_code', redirect_uris: 'https://shop.example/cb\nhttp://shop.example/cb', scope: 'openid' };
    const refused = await browser.submit(form, '/admin/clients', typed);
    expect(refused.status).toBe(400);
    expect(fieldProblemOn(refused, 'redirect_uris')).toEqual({ message: expect.stringMatching(/must use https/), linked: true });
    expect(refused.body).toContain('<h2 id="error-summary-title">There is a problem</h2>');
    expect(refused.body).toContain('<title>Error: Register a client');
    expect(refused.body).toContain('>https://shop.example/cb\nhttp://shop.example/cb</textarea>');
    expect(refused.body).toMatch(/id="client_type-2" name="client_type" value="public" checked/);
    expect(fieldProblemOn(refused, 'scope').message).toBeUndefined();

    const unknownScope = await browser.submit(form, '/admin/clients', { ...typed, redirect_uris: 'https://shop.example/cb', scope: 'openid shop:everything' });
    expect(unknownScope.status).toBe(400);
    expect(fieldProblemOn(unknownScope, 'scope')).toEqual({ message: expect.stringMatching(/^Unknown scope/), linked: true });

    const empty = await browser.submit(form, '/admin/clients', { client_name: ' ', client_type: 'confidential' });
    expect(empty.status).toBe(400);
    expect(fieldProblemOn(empty, 'client_name')).toEqual({ message: 'Give the client a name.', linked: true });
    expect(fieldProblemOn(empty, 'grant_types').message).toBe('Choose at least one grant type.');
    expect(empty.body).toContain('<a href="#grant_types">');
    expect(empty.body).toContain('<h2 id="error-summary-title">There are 2 problems</h2>');
    expect(await tableSnapshot(db, ['clients'])).toBe(before);
  });

  it('offers no verification email nor invitation on a person\'s page when the server sends no email (no SMTP_URL), and says why', async () => {
    const owner = await consolePerson(nest, ['owner']);
    const { browser } = await signIn(owner);
    const username = `unmailed_${Date.now().toString(36)}`;
    // Added without a password and with an address nobody has confirmed: both emails would be offered with a mail server.
    const added = await browser.submit(await browser.get('/admin/people/new'), '/admin/people', { username, email: `${username}@example.org` });
    expect(added.status).toBe(303);
    const page = await browser.get(added.location!);
    expect(page.body).toContain('not verified');
    expect(page.body).toContain('none (invited, or from an identity provider)');
    for (const button of ['Send a verification email', 'Send an invitation']) expect(page.body).not.toContain(button);
    for (const action of ['/email-verification"', '/invitation"']) expect(page.body).not.toContain(`${added.location!}${action}`);
    expect(page.body).toMatch(/id="verification-unavailable">No verification email can be sent: this server does not send email/);
    expect(page.body).toMatch(/id="invitation-unavailable">No invitation can be sent: this server does not send email/);
  });

  it('refuses a form without the console session\'s CSRF token (403) and changes nothing', async () => {
    const owner = await consolePerson(nest, ['owner']);
    const target = await consolePerson(nest, []);
    const { browser } = await signIn(owner);
    const before = await tableSnapshot(db, ['clients', ...FACTOR_TABLES]);
    const fields = { client_name: 'No token', client_type: 'confidential', grant_types: 'client_credentials' };
    for (const csrf of [{}, { csrf_token: 'forged' }] as Record<string, string>[]) {
      const create = await browser.post('/admin/clients', { ...csrf, ...fields });
      expect(create.status).toBe(403);
      expect(create.body).toContain('This form has expired or was not sent from the admin console');
      expect((await browser.post(`/admin/people/${target.userId}/reset-factors`, csrf)).status).toBe(403);
    }
    expect(await tableSnapshot(db, ['clients', ...FACTOR_TABLES])).toBe(before);
  });

  it('refuses a cross-site POST to every console form before it runs, even with a valid cookie and token', async () => {
    const posts = CONSOLE_CONTROLLERS.flatMap((controller) =>
      Object.getOwnPropertyNames(controller.prototype)
        .map((name) => (controller.prototype as unknown as Record<string, object>)[name])
        .filter((handler) => typeof handler === 'function' && Reflect.getMetadata(METHOD_METADATA, handler) === RequestMethod.POST)
        .map((handler) => ({ path: `/${String(Reflect.getMetadata(PATH_METADATA, handler))}`, use: (Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) as Record<string, unknown> | undefined)?.[SESSION_COOKIE_USE] })),
    );
    expect(posts.map((post) => post.path)).toEqual(expect.arrayContaining(['/admin/sign-out', '/admin/clients', '/admin/people/:id/:action', '/admin/keys/rotation']));
    expect(posts.filter((post) => post.use !== SessionCookieUse.Form)).toEqual([]);
    const owner = await consolePerson(nest, ['owner']);
    const { browser } = await signIn(owner);
    const csrf = consoleCsrf(await browser.get('/admin'));
    const before = await tableSnapshot(db, ['clients', 'signing_keys', ...FACTOR_TABLES]);
    for (const { path } of posts) {
      const refused = await browser.post(path.replace(/:[a-zA-Z]+/g, 'x'), { csrf_token: csrf }, { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' });
      expect([path, refused.status, /Cross-origin request detected/.test(refused.body)]).toEqual([path, 403, true]);
    }
    const create = await browser.post('/admin/clients', { csrf_token: csrf, client_name: 'Cross', client_type: 'confidential', grant_types: 'client_credentials' }, { 'sec-fetch-site': 'cross-site' });
    expect(create.status).toBe(403);
    expect(await tableSnapshot(db, ['clients', 'signing_keys', ...FACTOR_TABLES])).toBe(before);
  });

  it('serves the pages with a strict policy: no inline script, never framed, never cached', async () => {
    const owner = await consolePerson(nest, ['owner']);
    const { browser } = await signIn(owner);
    for (const path of ['/admin', '/admin/people', '/admin/clients', '/admin/audit', '/admin/keys', '/admin/clients/new']) {
      const page = await browser.get(path);
      expect([path, page.status]).toEqual([path, 200]);
      const csp = page.headers.get('content-security-policy')!;
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(page.headers.get('x-frame-options')).toBe('DENY');
      expect(page.headers.get('cache-control')).toBe('no-store');
      expect(page.body).not.toMatch(/<script(?![^>]*\bsrc=)/);
    }
    const cookie = (await new Browser(issuer.origin).get('/admin/sign-in')).headers.getSetCookie().find((line) => line.startsWith('latchkey_admin='));
    expect(cookie).toMatch(/Path=\/admin/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
  });
});
