/**
 * Issue 48: every person's live sessions in one list of the admin API (GET /sessions), for the help
 * desk that knows the stolen laptop's device, address or application rather than its owner, and
 * one ended by the public id the list gives (DELETE /sessions/{publicId}). Several people sign in
 * from different devices and addresses (User-Agent, X-Forwarded-For from a trusted proxy), over a
 * real port: each filter narrows, paging has no duplicate and no gap, ended and expired sessions
 * are absent, the cookie and the row id appear in no answer, and every refusal changes nothing.
 */
import { jest } from '@jest/globals';
import { publicSessionId } from '../../src/sessions/session-id.js';
import { Session } from '../../src/sessions/session.entity.js';
import { UsersService } from '../../src/users/users.service.js';
import { AdminApi, stillSignedIn, tableSnapshot, type AdminResponse } from '../helpers/admin-api.js';
import { adminCallers, expectDescribedAs, type AdminCallers } from '../helpers/admin-system-api.js';
import { Browser, sessionCookie } from '../helpers/browser.js';
import { authorizeAsUser, authorizeUrl, newPkce } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient } from '../helpers/test-app.js';

jest.setTimeout(60_000);

const FIREFOX_ON_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0';
const SAFARI_ON_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const CHROME_ON_ANDROID = 'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36';
const TABLES = ['sessions', 'session_clients', 'audit_events'];

interface Item {
  id: string;
  person: { id: string; username: string };
  device: string | null;
  ip: string | null;
  created_at: string;
  expires_at: string;
  applications: { client_id: string; name: string | null; signed_in_at: string }[];
}

interface Person {
  id: string;
  username: string;
  password: string;
}

describe('admin API: every live session, filtered and paged, and one ended by its id', () => {
  let app: TestApp;
  let admin: AdminApi;
  let callers: AdminCallers;
  let notes: RegisteredClient;
  let offset = 0;
  const now = () => new Date(Date.now() + offset);
  /** Every answer of the API in this file, to look for what must never be in one. */
  const answers: string[] = [];
  /** The session cookies handed out to the people of this file. */
  const cookies: string[] = [];

  beforeAll(async () => {
    // X-Forwarded-For from the test stands for people at different addresses.
    app = await TestApp.start({ TRUST_PROXY: '127.0.0.1' });
    jest.spyOn(app.clock, 'now').mockImplementation(now);
    admin = await AdminApi.setUp(app);
    callers = await adminCallers(admin);
    notes = await app.createClient({ name: 'Notes', scope: 'openid notes:read' });
  });
  afterAll(async () => {
    await app?.stop();
    delete process.env.TRUST_PROXY;
  });

  async function call(method: string, path: string, token?: string): Promise<AdminResponse> {
    const response = await admin.request(method, path, token);
    answers.push(JSON.stringify(response.body));
    return response;
  }

  async function person(): Promise<Person> {
    const user = await app.createUser();
    return { ...user, id: (await app.app.get(UsersService).require(user.username)).id };
  }

  /** `who` signs in on a device at an address, a second later than the sign-in before (unless `later` is false): the browser, signed in. */
  async function signIn(who: Person, userAgent: string, address: string, later = true): Promise<Browser> {
    if (later) offset += 1000;
    const browser = new Browser(app.baseUrl, { 'user-agent': userAgent, 'x-forwarded-for': address });
    const done = await browser.submit(await browser.get('/login'), '/login', { username: who.username, password: who.password });
    expect(done.status).toBe(303);
    cookies.push(sessionCookie(done)!.split(';')[0].split('=')[1]);
    return browser;
  }

  /** `who` signs in to Notes (OpenID Connect) on a device: the session records the client. */
  async function signInToNotes(who: Person, userAgent: string, address: string): Promise<Browser> {
    const browser = await signIn(who, userAgent, address);
    const pkce = newPkce();
    const page = await authorizeAsUser(browser, who, authorizeUrl(notes, { scope: 'openid notes:read', state: 's', nonce: 'n', code_challenge: pkce.challenge, code_challenge_method: 'S256' }));
    expect(page.location).toContain('code=');
    return browser;
  }

  /** Every live session matching `query`, all pages followed (each answer kept), with the help desk's token; `pages` counts them. */
  async function listed(query = '', token = callers.helpdesk, counted?: { pages: number }): Promise<Item[]> {
    const items: Item[] = [];
    let next: string | null = `/sessions${query === '' ? '' : `?${query}`}`;
    while (next !== null) {
      const page = await call('GET', next.replace(/^\/admin\/api\/v1/, ''), token);
      expect(page.status).toBe(200);
      items.push(...(page.body.items as Item[]));
      next = page.body.next as string | null;
      if (counted) counted.pages++;
    }
    return items;
  }

  const ofPeople = (items: Item[], people: Person[]) => items.filter((item) => people.some((p) => p.id === item.person.id));

  it('lists every live session newest first, with whose it is, its device, address and applications; each filter narrows; ended and expired ones are absent', async () => {
    const [ana, bo, cy, dee, eve] = [await person(), await person(), await person(), await person(), await person()];
    const start = now();
    const anaLaptop = await signInToNotes(ana, FIREFOX_ON_WINDOWS, '203.0.113.7');
    await signIn(bo, SAFARI_ON_IPHONE, '198.51.100.23');
    await signIn(cy, CHROME_ON_ANDROID, '203.0.113.99');
    await signIn(ana, SAFARI_ON_IPHONE, '2001:db8::7');
    // Over: dee's ended (by the help desk, on her page), eve's expired.
    await signIn(dee, FIREFOX_ON_WINDOWS, '203.0.113.8');
    await signIn(eve, FIREFOX_ON_WINDOWS, '203.0.113.9');
    const [deeSession] = (await call('GET', `/people/${dee.id}/sessions`, callers.helpdesk)).body.items as { id: string }[];
    expect((await call('DELETE', `/people/${dee.id}/sessions/${deeSession.id}`, callers.helpdesk)).status).toBe(204);
    await app.dataSource.createQueryBuilder().update(Session).set({ expiresAt: new Date(now().getTime() - 1000) }).where('userId = :id', { id: eve.id }).execute();

    const everyone = await listed();
    // Newest first, the administrators' own sessions among them.
    expect(everyone.map((item) => item.created_at)).toEqual([...everyone.map((item) => item.created_at)].sort().reverse());
    const ours = ofPeople(everyone, [ana, bo, cy, dee, eve]);
    expect(ours.map((item) => [item.person.username, item.device, item.ip])).toEqual([
      [ana.username, 'Safari on iPhone', '2001:db8::7'],
      [cy.username, 'Chrome on Android', '203.0.113.99'],
      [bo.username, 'Safari on iPhone', '198.51.100.23'],
      [ana.username, 'Firefox on Windows', '203.0.113.7'],
    ]);
    expect(ours[3]).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      person: { id: ana.id, username: ana.username },
      device: 'Firefox on Windows',
      ip: '203.0.113.7',
      created_at: expect.any(String),
      expires_at: expect.any(String),
      applications: [{ client_id: notes.clientId, name: 'Notes', signed_in_at: expect.any(String) }],
    });
    expect(ours[0].applications).toEqual([]);
    expect(new Date(ours[3].expires_at).getTime()).toBeGreaterThan(now().getTime());

    const usernames = (items: Item[]) => items.map((item) => `${item.person.username} ${item.device}`);
    expect(usernames(await listed(`person=${ana.id}`))).toEqual([`${ana.username} Safari on iPhone`, `${ana.username} Firefox on Windows`]);
    expect(usernames(await listed(`person=${ana.id.toUpperCase()}`))).toHaveLength(2);
    expect(await listed(`person=${dee.id}`)).toEqual([]);
    expect(await listed(`person=${eve.id}`)).toEqual([]);
    expect(usernames(await listed(`client=${notes.clientId}`))).toEqual([`${ana.username} Firefox on Windows`]);
    expect(await listed('client=no-such-client')).toEqual([]);
    expect(usernames(await listed('ip=203.0.113.7'))).toEqual([`${ana.username} Firefox on Windows`]);
    expect(usernames(await listed('ip=203.0.113.'))).toEqual([`${cy.username} Chrome on Android`, `${ana.username} Firefox on Windows`]);
    expect(usernames(await listed('ip=2001:DB8::7'))).toEqual([`${ana.username} Safari on iPhone`]);
    expect(usernames(await listed('ip=2001:db8:'))).toEqual([`${ana.username} Safari on iPhone`]);
    expect(usernames(ofPeople(await listed('device=iphone'), [ana, bo, cy]))).toEqual([`${ana.username} Safari on iPhone`, `${bo.username} Safari on iPhone`]);
    expect(usernames(await listed(`device=iphone&person=${bo.id}`))).toEqual([`${bo.username} Safari on iPhone`]);
    // since is inclusive, until exclusive, both on when the session started.
    const sinceStart = ofPeople(await listed(`since=${start.toISOString()}`), [ana, bo, cy]);
    expect(sinceStart).toHaveLength(4);
    expect(usernames(await listed(`since=${ours[2].created_at}&until=${ours[1].created_at}`))).toEqual([`${bo.username} Safari on iPhone`]);
    expect(usernames(await listed(`since=${ours[1].created_at}&ip=203.0.113.`))).toEqual([`${cy.username} Chrome on Android`]);

    // Ended from the list: ana's laptop signs out; the list no longer has it.
    expect(await stillSignedIn(anaLaptop)).toBe(true);
    expect((await call('DELETE', `/sessions/${ours[3].id}`, callers.helpdesk)).status).toBe(204);
    expect(await stillSignedIn(anaLaptop)).toBe(false);
    expect(usernames(await listed(`person=${ana.id}`))).toEqual([`${ana.username} Safari on iPhone`]);
    expect(await listed(`client=${notes.clientId}`)).toEqual([]);
  });

  it('pages through every session without a duplicate or a gap, the filters kept in the next link', async () => {
    const people = [await person(), await person(), await person()];
    for (const who of people) for (const userAgent of [FIREFOX_ON_WINDOWS, SAFARI_ON_IPHONE, CHROME_ON_ANDROID]) await signIn(who, userAgent, '192.0.2.1');
    // Two sessions started in the same millisecond: the public id breaks the tie.
    const twice = await person();
    jest.spyOn(app.clock, 'now').mockReturnValue(new Date(now().getTime() + 500));
    await signIn(twice, FIREFOX_ON_WINDOWS, '192.0.2.1', false);
    await signIn(twice, FIREFOX_ON_WINDOWS, '192.0.2.1', false);
    jest.spyOn(app.clock, 'now').mockImplementation(now);
    const [a, b] = await listed(`person=${twice.id}`);
    expect(a.created_at).toBe(b.created_at);

    const whole = await listed('limit=200');
    const byTwo = { pages: 0 };
    expect((await listed('limit=2', callers.helpdesk, byTwo)).map((item) => item.id)).toEqual(whole.map((item) => item.id));
    expect(byTwo.pages).toBe(Math.ceil(whole.length / 2));
    expect(new Set(whole.map((item) => item.id)).size).toBe(whole.length);

    const byOne = { pages: 0 };
    expect(await listed('ip=192.0.2.1&limit=1', callers.helpdesk, byOne)).toHaveLength(11);
    expect(byOne.pages).toBe(11);
    const first = await call('GET', '/sessions?ip=192.0.2.1&limit=1', callers.helpdesk);
    expect(new URL(String(first.body.next), app.baseUrl).searchParams.get('ip')).toBe('192.0.2.1');
  });

  it('takes LIKE wildcards in device literally', async () => {
    const [tool, other] = [await person(), await person()];
    await signIn(tool, 'Tool_X/1.0', '192.0.2.2');
    await signIn(other, 'ToolAX/1.0', '192.0.2.2');
    expect((await listed('ip=192.0.2.2')).map((item) => item.device)).toEqual(['ToolAX', 'Tool_X']);
    expect((await listed('device=l_x')).map((item) => item.device)).toEqual(['Tool_X']);
    expect(await listed('device=%25')).toEqual([]);
    expect(await listed(`device=${encodeURIComponent('\\')}`)).toEqual([]);
  });

  it('lets the help desk end an administrator\'s session by its id, audited with who and from where; an unknown or ended id is a 404', async () => {
    const owner = await admin.signIn(['owner']);
    const [session] = await listed(`person=${owner.userId}`);
    expect((await call('DELETE', `/sessions/${session.id}`, callers.helpdesk)).status).toBe(204);
    expect(await listed(`person=${owner.userId}`)).toEqual([]);
    const events = (await app.dataSource.query(`SELECT "actor", "ip", "details" FROM "audit_events" WHERE "action" = 'session.ended' AND "subject" = 'user:${owner.userId}'`)) as { actor: string; ip: string; details: string }[];
    expect(events.map((e) => ({ ...e, details: JSON.parse(e.details) as unknown }))).toEqual([{ actor: expect.stringMatching(/^user:/), ip: '127.0.0.1', details: { session: session.id } }]);

    for (const id of [session.id, '00000000-0000-4000-8000-000000000000', 'not-a-session']) {
      const refused = await call('DELETE', `/sessions/${id}`, callers.helpdesk);
      expect([refused.status, refused.body.error]).toEqual([404, 'not_found']);
    }
  });

  it('refuses the list without a token, to admin:clients, to a person without a role or whose role was removed; the auditor reads it', async () => {
    const service = await admin.serviceToken('admin:clients');
    expect((await call('GET', '/sessions')).status).toBe(401);
    for (const token of [callers.clientAdmin, service.token, callers.nobody, callers.demoted]) {
      const refused = await call('GET', '/sessions', token);
      expect([refused.status, refused.body.error]).toEqual([403, 'insufficient_scope']);
    }
    for (const token of [callers.auditor, callers.owner, (await admin.serviceToken('admin:people')).token]) expect((await call('GET', '/sessions', token)).status).toBe(200);
    await expectDescribedAs(admin, 'GET', '/sessions', 'people', 'read');
    await expectDescribedAs(admin, 'DELETE', '/sessions/{publicId}', 'people', 'write');
  });

  it('refuses ending a session to admin:read and everyone else without admin:people, the session still live and the tables unchanged', async () => {
    const who = await person();
    const browser = await signIn(who, FIREFOX_ON_WINDOWS, '192.0.2.3');
    const [session] = await listed(`person=${who.id}`);
    const service = await admin.serviceToken('admin:read');
    const before = await tableSnapshot(app.dataSource, TABLES);
    const refusals: [string, number][] = [];
    for (const [name, token] of [['no token', undefined], ['auditor', callers.auditor], ['admin:read client', service.token], ['client-admin', callers.clientAdmin], ['no role', callers.nobody], ['demoted', callers.demoted]] as const) {
      refusals.push([name, (await call('DELETE', `/sessions/${session.id}`, token)).status]);
    }
    expect(refusals).toEqual([['no token', 401], ['auditor', 403], ['admin:read client', 403], ['client-admin', 403], ['no role', 403], ['demoted', 403]]);
    expect(await tableSnapshot(app.dataSource, TABLES)).toBe(before);
    expect(await stillSignedIn(browser)).toBe(true);
    expect(await listed(`person=${who.id}`)).toEqual([session]);
  });

  it('refuses malformed filters, limits and cursors with a 400, never a wider list', async () => {
    const bad = [
      'since=2026-02-31T00:00:00Z',
      'since=2026-11-30',
      'since=yesterday',
      'until=2026-11-30T08:00:00',
      'since=2026-11-30T08:00:00Z&until=2026-11-30T08:00:00Z',
      'limit=1000',
      'limit=0',
      'limit=ten',
      'person=ana',
      'ip=example.org',
      'ip=203.0.113',
      'device=',
      `device=${'x'.repeat(101)}`,
      'client=has%20space',
      'cursor=not-ours',
      `cursor=${Buffer.from(JSON.stringify(['yesterday', 'x'])).toString('base64url')}`,
      'usr=ana',
    ];
    for (const query of bad) {
      const refused = await call('GET', `/sessions?${query}`, callers.helpdesk);
      expect({ query, status: refused.status, error: refused.body.error }).toEqual({ query, status: 400, error: 'invalid_request' });
      expect(typeof refused.body.error_description).toBe('string');
    }
  });

  it('never answers a session\'s cookie, its row id (the hash of the cookie\'s secret) or its sid', async () => {
    const rows = (await app.dataSource.query('SELECT "id" FROM "sessions"')) as { id: string }[];
    expect(rows.length).toBeGreaterThan(10);
    expect(cookies.length).toBeGreaterThan(10);
    const secrets = [...rows.map((row) => row.id), ...rows.map((row) => publicSessionId(row.id)), ...cookies];
    // The next links' cursors too, decoded.
    const cursors = answers.flatMap((answer) => [...answer.matchAll(/cursor=([A-Za-z0-9_-]+)/g)].map((m) => Buffer.from(m[1], 'base64url').toString('utf8')));
    expect(cursors.length).toBeGreaterThan(5);
    const everything = [...answers, ...cursors].join('\n');
    expect(secrets.filter((secret) => everything.includes(secret))).toEqual([]);
  });
});
