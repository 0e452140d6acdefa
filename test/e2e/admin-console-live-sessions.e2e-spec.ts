/**
 * Issue 48, the admin console's Sessions page over HTTP, as a browser without script uses it:
 * every person's live sessions, filtered by person (a username or an id), application, address
 * and device, 25 a page; a help desk ends one after a confirmation page (the person's browser is
 * signed out, session.ended is audited with who and from where); an auditor reads the page without
 * End and is refused the confirmation and the form, a client administrator the page; the End form
 * needs the console session's CSRF token. The real app at its issuer, behind a trusted proxy.
 */
import { jest } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { DataSource } from 'typeorm';
import { ClientsService } from '../../src/clients/clients.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { stillSignedIn, tableSnapshot } from '../helpers/admin-api.js';
import { alertOf, consoleCsrf, consolePerson, headingOf, noticeOf, readBack, signInWithNewBrowser, startConsoleApp, stopConsoleApp, type ConsolePerson } from '../helpers/admin-console.js';
import { Browser, type Page } from '../helpers/browser.js';
import { MovableClock } from '../helpers/movable-clock.js';
import { authorizeAsUser, authorizeUrl, newPkce } from '../helpers/oauth-flow.js';

jest.setTimeout(60_000);

const FIREFOX_ON_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0';
const SAFARI_ON_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const TABLES = ['sessions', 'session_clients', 'audit_events'];

describe('the admin console: every live session (issue 48)', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  let db: DataSource;
  const clock = new MovableClock();

  beforeAll(async () => {
    // X-Forwarded-For from the test stands for people at different addresses.
    ({ nest, issuer, db } = await startConsoleApp(clock, { TRUST_PROXY: '127.0.0.1' }));
  });
  afterAll(() => stopConsoleApp(nest, ['TRUST_PROXY']));

  const signIn = (person: ConsolePerson) => signInWithNewBrowser(issuer.origin, person, clock);

  /** A person signed in on a device at an address, a second after the sign-in before; `to`: through that client (OpenID Connect). */
  async function signedIn(userAgent: string, address: string, to?: { clientId: string; redirectUri: string }, username = `person_${Math.random().toString(36).slice(2, 10)}`) {
    clock.advance(1000);
    const password = 'correct horse battery staple';
    const user = (await nest.get(UsersService).findByUsername(username)) ?? (await nest.get(UsersService).create(username, password));
    const browser = new Browser(issuer.origin, { 'user-agent': userAgent, 'x-forwarded-for': address });
    expect((await browser.submit(await browser.get('/login'), '/login', { username, password })).status).toBe(303);
    if (to) {
      const pkce = newPkce();
      const page = await authorizeAsUser(browser, { username, password }, authorizeUrl(to, { scope: 'openid', state: 's', nonce: 'n', code_challenge: pkce.challenge, code_challenge_method: 'S256' }));
      expect(page.location).toContain('code=');
    }
    return { browser, id: user.id, username };
  }

  /** The table's rows: the person (and the page it links to), the device, the address, and the End link when there is one. */
  const rows = (page: Page) =>
    [...page.body.matchAll(/<tr>\s*<td><a href="\/admin\/people\/([^"]+)">([^<]*)<\/a><\/td>\s*<td>([^<]*)<\/td>\s*<td>([^<]*)<\/td>[\s\S]*?<\/tr>/g)].map((m) => ({
      personId: m[1],
      username: m[2],
      device: m[3],
      ip: m[4],
      end: readBack(/<a href="([^"]+)" aria-label="End the session/.exec(m[0])?.[1]),
    }));
  const link = (page: Page, label: string) => readBack(new RegExp(`<a href="([^"]+)">${label}</a>`).exec(page.body)?.[1]);

  it('lets a help desk find sessions by person, application, address and device, page through them, and end one after a confirmation', async () => {
    const { client } = await nest.get(ClientsService).create({ name: 'Notes', redirectUris: ['http://localhost:8080/callback'], scope: 'openid notes:read' });
    const notes = { clientId: client.id, redirectUri: 'http://localhost:8080/callback' };
    const ana = await signedIn(FIREFOX_ON_WINDOWS, '203.0.113.7', notes);
    const bo = await signedIn(SAFARI_ON_IPHONE, '198.51.100.23');
    const anaPhone = await signedIn(SAFARI_ON_IPHONE, '203.0.113.40', undefined, ana.username);
    const { browser, page: dashboard } = await signIn(await consolePerson(nest, ['helpdesk']));
    expect(dashboard.body).toContain('href="/admin/sessions"');

    const all = await browser.get('/admin/sessions');
    expect([all.status, headingOf(all)]).toEqual([200, 'Sessions']);
    expect(all.body).toContain('<a href="/admin/sessions" aria-current="page">Sessions</a>');
    const listed = rows(all);
    expect(listed.slice(1, 4).map((row) => [row.username, row.device, row.ip])).toEqual([
      [ana.username, 'Safari on iPhone', '203.0.113.40'],
      [bo.username, 'Safari on iPhone', '198.51.100.23'],
      [ana.username, 'Firefox on Windows', '203.0.113.7'],
    ]);
    // The newest: the help desk's own sign-in to the console.
    expect(listed[0].device).toBe('node');
    expect(listed[3].personId).toBe(ana.id);
    expect(all.body).toMatch(new RegExp(`<td>Notes</td>\\s*<td><a href="[^"]+" aria-label="End the session of ${ana.username} started [^"]+ on Firefox on Windows">End</a>`));

    const named = (query: string) => browser.get(`/admin/sessions?${query}`);
    expect(rows(await named(`person=${ana.username}`)).map((row) => row.device)).toEqual(['Safari on iPhone', 'Firefox on Windows']);
    expect(rows(await named(`person=${ana.username.toUpperCase()}`)).map((row) => row.device)).toEqual(['Safari on iPhone', 'Firefox on Windows']);
    expect(rows(await named(`person=${bo.id}`)).map((row) => row.username)).toEqual([bo.username]);
    expect(rows(await named(`client=${client.id}`)).map((row) => row.device)).toEqual(['Firefox on Windows']);
    expect(rows(await named('ip=203.0.113.')).map((row) => row.ip)).toEqual(['203.0.113.40', '203.0.113.7']);
    expect(rows(await named('device=iphone&ip=198.51.100.23')).map((row) => row.username)).toEqual([bo.username]);
    const nobody = await named('person=nobody-has-this-name');
    expect([nobody.status, alertOf(nobody), rows(nobody)]).toEqual([400, 'Nobody has the username "nobody-has-this-name".', []]);
    const badAddress = await named('ip=example.org');
    expect([badAddress.status, alertOf(badAddress)]).toEqual([400, expect.stringMatching(/^ip must be an address/)]);
    expect(badAddress.body).toContain('value="example.org"');

    // 25 a page, forwards with the filters kept, and back to the first.
    for (let i = 0; i < 26; i++) await signedIn(FIREFOX_ON_WINDOWS, '192.0.2.50');
    const first = await named('ip=192.0.2.50');
    expect(rows(first)).toHaveLength(25);
    const next = link(first, 'Next page')!;
    expect(next).toMatch(/^\/admin\/sessions\?ip=192\.0\.2\.50&cursor=/);
    const second = await browser.get(next);
    expect(rows(second)).toHaveLength(1);
    expect(link(second, 'Next page')).toBeUndefined();
    expect(link(second, 'First page')).toBe('/admin/sessions?ip=192.0.2.50');
    expect(new Set([...rows(first), ...rows(second)].map((row) => row.personId)).size).toBe(26);

    // End: a confirmation page saying whose session on which device, then back to the list as it was.
    const filtered = await named('ip=203.0.113.');
    const laptop = rows(filtered).find((row) => row.device === 'Firefox on Windows')!;
    const confirm = await browser.get(laptop.end!);
    expect([confirm.status, headingOf(confirm)]).toEqual([200, 'End a session']);
    expect(readBack(confirm.body)).toContain(`End the session of ${ana.username} on Firefox on Windows, from 203.0.113.7?`);
    expect(readBack(confirm.body)).toContain('<a class="button secondary" href="/admin/sessions?ip=203.0.113.">Cancel</a>');
    const action = readBack(/<form method="post" action="(\/admin\/sessions\/[^"]+)"/.exec(confirm.body)?.[1]);
    expect(action).toBe(laptop.end);
    const done = await browser.post(action!, { csrf_token: consoleCsrf(confirm) });
    expect(done).toMatchObject({ status: 303, location: '/admin/sessions?ip=203.0.113.' });
    const after = await browser.get(done.location!);
    expect(noticeOf(after)).toBe(`The session of ${ana.username} on Firefox on Windows, from 203.0.113.7 ended.`);
    expect(rows(after).map((row) => row.ip)).toEqual(['203.0.113.40']);
    expect(await stillSignedIn(ana.browser)).toBe(false);
    expect(await stillSignedIn(anaPhone.browser)).toBe(true);
    const events = (await db.query(`SELECT "actor", "ip" FROM "audit_events" WHERE "action" = 'session.ended' AND "subject" = 'user:${ana.id}'`)) as { actor: string; ip: string }[];
    expect(events).toEqual([{ actor: expect.stringMatching(/^user:/), ip: '127.0.0.1' }]);

    // The ended session's confirmation is a 404 page; the End form of it too, changing nothing.
    const before = await tableSnapshot(db, TABLES);
    const gone = await browser.get(laptop.end!);
    expect([gone.status, headingOf(gone)]).toEqual([404, 'Not found']);
    const again = await browser.post(action!, { csrf_token: consoleCsrf(after) });
    expect([again.status, headingOf(again)]).toEqual([404, 'Not found']);
    expect(await tableSnapshot(db, TABLES)).toBe(before);
  });

  it('shows an auditor the page without End and refuses them the confirmation and the form; a client administrator has no Sessions page', async () => {
    const target = await signedIn(FIREFOX_ON_WINDOWS, '203.0.113.77');
    const helpdesk = await signIn(await consolePerson(nest, ['helpdesk']));
    const [row] = rows(await helpdesk.browser.get(`/admin/sessions?person=${target.id}`));
    expect(row.end).toMatch(/^\/admin\/sessions\/[0-9a-f-]{36}\/end\?person=/);

    const { browser, page } = await signIn(await consolePerson(nest, ['auditor']));
    expect(page.body).toContain('href="/admin/sessions"');
    const shown = await browser.get(`/admin/sessions?person=${target.id}`);
    expect(shown.status).toBe(200);
    expect(rows(shown)).toEqual([{ personId: target.id, username: target.username, device: 'Firefox on Windows', ip: '203.0.113.77', end: undefined }]);
    expect(shown.body).not.toContain('/end?');
    const before = await tableSnapshot(db, TABLES);
    const confirm = await browser.get(row.end!);
    expect([confirm.status, headingOf(confirm)]).toEqual([403, 'Not allowed']);
    const refused = await browser.post(row.end!, { csrf_token: consoleCsrf(page) });
    expect([refused.status, /Not allowed/.test(refused.body)]).toEqual([403, true]);
    expect(await tableSnapshot(db, TABLES)).toBe(before);
    expect(await stillSignedIn(target.browser)).toBe(true);

    const clientAdmin = await signIn(await consolePerson(nest, ['client-admin']));
    expect(clientAdmin.page.body).not.toContain('href="/admin/sessions"');
    expect((await clientAdmin.browser.get('/admin/sessions')).status).toBe(403);
    expect((await clientAdmin.browser.get(row.end!)).status).toBe(403);
    expect(await stillSignedIn(target.browser)).toBe(true);
  });

  it("refuses the End form without the console session's CSRF token, changing nothing", async () => {
    const target = await signedIn(FIREFOX_ON_WINDOWS, '203.0.113.78');
    const { browser } = await signIn(await consolePerson(nest, ['helpdesk']));
    const [row] = rows(await browser.get(`/admin/sessions?person=${target.id}`));
    const before = await tableSnapshot(db, TABLES);
    for (const csrf of [{}, { csrf_token: 'forged' }] as Record<string, string>[]) {
      const refused = await browser.post(row.end!, csrf);
      expect([refused.status, refused.body.includes('This form has expired or was not sent from the admin console')]).toEqual([403, true]);
    }
    expect(await tableSnapshot(db, TABLES)).toBe(before);
    expect(await stillSignedIn(target.browser)).toBe(true);
  });
});
