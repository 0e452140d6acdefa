/**
 * Issue 48: a session knows the device it was started on and the address it came from, on SQLite
 * or PostgreSQL, over a real port. Each way of signing in (the password form, a passkey) records
 * both; the account page lists them, "This device" first, and the admin API returns them; a
 * sign-in from a device none of the person's recent sessions had is audited once as
 * `user.new_device`, a first sign-in is not; the User-Agent header itself is stored nowhere, and
 * markup in it never reaches a page.
 */
import { jest } from '@jest/globals';
import { ADMIN_API } from '../../src/admin/admin-reply.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { Clock } from '../../src/common/clock.js';
import { GrantType } from '../../src/common/oauth.constants.js';
import { DEVICE_MEMORY_DAYS } from '../../src/sessions/device-history.js';
import { Browser, type Page } from '../helpers/browser.js';
import { basicAuth } from '../helpers/oauth-flow.js';
import { PasskeyTestApp } from '../helpers/passkeys.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';

jest.setTimeout(60_000);

const FIREFOX_ON_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0';
const SAFARI_ON_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const CHROME_ON_ANDROID = 'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36';
const LAPTOP = '203.0.113.7';
const PHONE = '198.51.100.23';

type Person = { id: string; username: string; password: string };
type AuditRow = { action: string; actor: string; ip: string | null; details: string };

describe('sessions know their device and address (issue 48)', () => {
  let app: PasskeyTestApp;

  beforeAll(async () => {
    // X-Forwarded-For from the test stands for people at different addresses.
    app = await PasskeyTestApp.start({ TRUST_PROXY: '127.0.0.1' });
  });
  afterAll(async () => {
    await app?.stop();
    delete process.env.TRUST_PROXY;
  });

  /** A browser on a device: its User-Agent and address go with every request. */
  const device = (userAgent: string, address: string) => new Browser(app.baseUrl, { 'user-agent': userAgent, 'x-forwarded-for': address });

  async function signIn(browser: Browser, who: Person): Promise<Browser> {
    const done = await browser.submit(await browser.get('/login'), '/login', { username: who.username, password: who.password });
    expect(done.status).toBe(303);
    return browser;
  }

  const events = async (who: Person): Promise<(Omit<AuditRow, 'details'> & { details: Record<string, unknown> })[]> => {
    const rows = (await app.dataSource.query(`SELECT "action", "actor", "ip", "details" FROM "audit_events" WHERE "subject" = 'user:${who.id}' ORDER BY "id"`)) as AuditRow[];
    return rows.map((row) => ({ ...row, details: JSON.parse(row.details) as Record<string, unknown> }));
  };
  const sessionsOf = (who: Person) => app.dataSource.query(`SELECT "device", "ip" FROM "sessions" WHERE "user_id" = '${who.id}' ORDER BY "created_at"`) as Promise<{ device: string | null; ip: string | null }[]>;

  /** The account page's sessions: each heading and the line under it. */
  const listedSessions = (page: Page) =>
    [...page.body.matchAll(/<li>\s*<h3>([^<]*)<\/h3>\s*<p class="note">([^<]*)<\/p>/g)].map((m) => ({ heading: m[1], facts: m[2] }));

  /** A token of a service client holding admin:read (client_credentials), for the admin API. */
  async function adminReadToken(): Promise<string> {
    const { client, secret } = await app.nest.get(ClientsService).create({ name: 'Admin reader (test)', redirectUris: [], scope: 'admin:read', grantTypes: [GrantType.ClientCredentials] });
    const response = await fetch(`${app.baseUrl}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(client.id, secret!) },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'admin:read' }).toString(),
    });
    return String(((await response.json()) as Record<string, unknown>).access_token);
  }

  it('records each sign-in\'s device and address, lists them on the account page and in the admin API, and audits the second device once', async () => {
    const who = await app.createUser();
    await signIn(device(FIREFOX_ON_WINDOWS, LAPTOP), who);
    // The first sign-in ever has nothing to compare with: no new device.
    expect(await events(who)).toEqual([{ action: 'user.signed_in', actor: `user:${who.id}`, ip: LAPTOP, details: { amr: ['pwd'], device: 'Firefox on Windows' } }]);
    // The same device again (another browser profile on it): known.
    await signIn(device(FIREFOX_ON_WINDOWS, LAPTOP), who);
    expect((await events(who)).map((e) => e.action)).toEqual(['user.signed_in', 'user.signed_in']);

    const phone = await signIn(device(SAFARI_ON_IPHONE, PHONE), who);
    const after = await events(who);
    expect(after.map((e) => e.action)).toEqual(['user.signed_in', 'user.signed_in', 'user.signed_in', 'user.new_device']);
    expect(after.filter((e) => e.action === 'user.new_device')).toEqual([{ action: 'user.new_device', actor: `user:${who.id}`, ip: PHONE, details: { device: 'Safari on iPhone', ip: PHONE } }]);
    expect(await sessionsOf(who)).toEqual([
      { device: 'Firefox on Windows', ip: LAPTOP },
      { device: 'Firefox on Windows', ip: LAPTOP },
      { device: 'Safari on iPhone', ip: PHONE },
    ]);
    // The header itself is kept nowhere: no version, no build, no engine.
    for (const table of ['sessions', 'audit_events']) {
      const dump = JSON.stringify(await app.dataSource.query(`SELECT * FROM "${table}"`));
      expect(dump).not.toContain('Gecko');
      expect(dump).not.toContain('Version/17.5');
    }

    const page = await phone.get('/account');
    expect(page.status).toBe(200);
    const listed = listedSessions(page);
    expect(listed.map((s) => s.heading)).toEqual(['This device', 'Firefox on Windows', 'Firefox on Windows']);
    expect(listed[0].facts).toMatch(new RegExp(`^Safari on iPhone, from ${PHONE.replace(/\./g, '\\.')} · Signed in \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC · Ends by itself at `));
    expect(listed[1].facts).toMatch(new RegExp(`^From ${LAPTOP.replace(/\./g, '\\.')} · Signed in `));
    expect(page.body).toMatch(/aria-label="End this session, signed in [^"]+ on Firefox on Windows"/);
    expect(page.body).toContain(`<span class="warning">Signed in from a new device: Safari on iPhone (none of your sessions of the last 90 days was on it)</span> · from ${PHONE}`);
    expect(page.body.match(/Signed in from a new device/g)).toHaveLength(1);

    const answer = await fetch(`${app.baseUrl}/${ADMIN_API}/people/${who.id}/sessions`, { headers: { authorization: `Bearer ${await adminReadToken()}` } });
    expect(answer.status).toBe(200);
    const { items } = (await answer.json()) as { items: { device: string | null; ip: string | null }[] };
    expect(items.map(({ device, ip }) => ({ device, ip }))).toEqual([
      { device: 'Safari on iPhone', ip: PHONE },
      { device: 'Firefox on Windows', ip: LAPTOP },
      { device: 'Firefox on Windows', ip: LAPTOP },
    ]);
  });

  it(`compares with the sessions of the last ${DEVICE_MEMORY_DAYS} days only: after that long away, a sign-in has nothing to compare with`, async () => {
    const who = await app.createUser();
    await signIn(device(FIREFOX_ON_WINDOWS, LAPTOP), who);
    const later = new Date(Date.now() + (DEVICE_MEMORY_DAYS + 1) * 24 * 3600 * 1000);
    const clock = jest.spyOn(app.nest.get(Clock), 'now').mockReturnValue(later);
    try {
      // The laptop's session ended (expired) more than DEVICE_MEMORY_DAYS ago: the phone is compared with nothing.
      await signIn(device(SAFARI_ON_IPHONE, PHONE), who);
      expect((await events(who)).map((e) => e.action)).toEqual(['user.signed_in', 'user.signed_in']);
      // The laptop again: the phone's session is recent, the laptop's too old to count, so the laptop is new again.
      await signIn(device(FIREFOX_ON_WINDOWS, LAPTOP), who);
      expect((await events(who)).map((e) => e.action)).toEqual(['user.signed_in', 'user.signed_in', 'user.signed_in', 'user.new_device']);
      expect((await events(who)).at(-1)?.details).toEqual({ device: 'Firefox on Windows', ip: LAPTOP });
    } finally {
      clock.mockRestore();
    }
  });

  it('a passkey sign-in records its device and address as well, and is a new device when it is one', async () => {
    const who = await app.createUser();
    const laptop = await signIn(device(FIREFOX_ON_WINDOWS, LAPTOP), who);
    const authenticator = new SoftAuthenticator(new URL(app.origin).hostname, app.origin);
    expect((await app.addPasskey(laptop, authenticator, 'Phone key')).status).toBe(200);

    const { answer } = await app.passkeySignIn(device(CHROME_ON_ANDROID, PHONE), authenticator);
    expect(answer.status).toBe(200);
    expect((await sessionsOf(who)).at(-1)).toEqual({ device: 'Chrome on Android', ip: PHONE });
    const newDevices = (await events(who)).filter((e) => e.action === 'user.new_device');
    expect(newDevices).toEqual([{ action: 'user.new_device', actor: `user:${who.id}`, ip: PHONE, details: { device: 'Chrome on Android', ip: PHONE } }]);
  });

  it('keeps markup in a User-Agent out of the tables and the pages: only the description is stored and shown', async () => {
    const who = await app.createUser();
    const hostile = 'Mozilla/5.0 (X11; Linux x86_64) <script>alert("ua")</script> Firefox/128.0';
    const browser = await signIn(device(hostile, LAPTOP), who);
    await signIn(device('<img src=x onerror=alert(1)>', PHONE), who);
    expect(await sessionsOf(who)).toEqual([
      { device: 'Firefox on Linux', ip: LAPTOP },
      { device: 'Unknown device', ip: PHONE },
    ]);
    const page = await browser.get('/account');
    expect(listedSessions(page).map((s) => s.heading)).toEqual(['This device', 'Unknown device']);
    expect(page.body).toContain('Signed in from a new device: Unknown device');
    // Neither the markup nor an escaped copy of it: the header never reaches the page.
    for (const trace of ['<script', '&lt;script', '<img', '&lt;img', 'alert(']) expect(page.body).not.toContain(trace);

    // And should a row hold markup all the same (written by hand, or by another version), the page escapes it.
    await app.dataSource.query(`UPDATE "sessions" SET "device" = '<script>alert(2)</script>' WHERE "user_id" = '${who.id}' AND "ip" = '${PHONE}'`);
    const escaped = await browser.get('/account');
    expect(escaped.body).toContain('<h3>&lt;script&gt;alert(2)&lt;/script&gt;</h3>');
    expect(escaped.body).not.toContain('<script');
  });
});
