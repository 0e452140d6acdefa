/**
 * Issue 48: GET /admin/api/v1/overview, the admin console dashboard's counts: for every
 * administrator (numbers only), refused without a token, without an admin scope, and to a person
 * whose role is gone. The last 24 hours' sign-ins, failed sign-ins, new devices, consents given and
 * withdrawn move by exactly what was done, and an event older than 24 hours is not counted.
 */
import { randomUUID } from 'node:crypto';
import { AdminRolesService } from '../../src/admin/admin-roles.service.js';
import { AuditEventStore } from '../../src/audit/audit-event.store.js';
import { AuditService } from '../../src/audit/audit.service.js';
import { SIGN_IN_FAILED } from '../../src/audit/sign-in-failures.js';
import { AccessWithdrawalService } from '../../src/consents/access-withdrawal.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { AdminApi, type AdminResponse } from '../helpers/admin-api.js';
import { Browser, hiddenFields } from '../helpers/browser.js';
import { authorizeAsUser, authorizeUrl, newPkce } from '../helpers/oauth-flow.js';
import { TestApp, type TestUser } from '../helpers/test-app.js';

const FIREFOX_ON_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0';
const SAFARI_ON_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const HOUR = 3600 * 1000;

type LastDay = { sign_ins: number; failed_sign_ins: number; new_devices: number; consents_given: number; consents_withdrawn: number };

describe('GET /admin/api/v1/overview', () => {
  let app: TestApp;
  let admin: AdminApi;

  beforeAll(async () => {
    app = await TestApp.start();
    admin = await AdminApi.setUp(app);
  });
  afterAll(async () => {
    await app.stop();
  });

  it('answers every role the counts of people, active people, clients and live sessions', async () => {
    const helpdesk = await admin.signIn(['helpdesk']);
    const before = await admin.request('GET', '/overview', helpdesk.token);
    expect(before.status).toBe(200);
    expect(before.headers.get('cache-control')).toBe('no-store');
    await app.createUser();
    await app.createClient();
    const after = await admin.request('GET', '/overview', helpdesk.token);
    const counts = (response: typeof before) => response.body as { people: { total: number; active: number }; clients: { total: number }; sessions: { live: number } };
    expect(counts(after).people.total).toBe(counts(before).people.total + 1);
    expect(counts(after).people.active).toBe(counts(before).people.active + 1);
    expect(counts(after).clients.total).toBe(counts(before).clients.total + 1);
    expect(counts(after).sessions.live).toBeGreaterThanOrEqual(1);
    for (const role of ['auditor', 'client-admin', 'owner'] as const) {
      expect((await admin.request('GET', '/overview', (await admin.signIn([role])).token)).status).toBe(200);
    }
  });

  /** The password form on a browser of its own, as on a device: its User-Agent goes with every request. */
  async function signInOn(userAgent: string, who: TestUser): Promise<Browser> {
    const browser = new Browser(app.baseUrl, { 'user-agent': userAgent });
    const done = await browser.submit(await browser.get('/login'), '/login', { username: who.username, password: who.password });
    expect(done.status).toBe(303);
    return browser;
  }

  const lastDay = (response: AdminResponse) => response.body.last_24_hours as LastDay;

  it("counts the last 24 hours' sign-ins, failed sign-ins, new devices, consents given and withdrawn, by exactly what was done", async () => {
    const auditor = await admin.signIn(['auditor']);
    const client = await app.createClient({ name: 'Notes' });
    const person = await app.createUser();
    const personId = (await app.app.get(UsersService).require(person.username)).id;
    const before = await admin.request('GET', '/overview', auditor.token);
    expect(before.status).toBe(200);

    // A sign-in on a laptop (the first ever: no new device), a wrong password, then the phone: a new device.
    const laptop = await signInOn(FIREFOX_ON_WINDOWS, person);
    const guesser = new Browser(app.baseUrl);
    const login = await guesser.get('/login');
    expect((await guesser.post('/login', { ...hiddenFields(login.body, '/login'), username: person.username, password: 'not the password' })).status).toBe(401);
    await signInOn(SAFARI_ON_IPHONE, person);
    // On the laptop, still signed in, the person lets the client in; then takes its access back.
    const consented = await authorizeAsUser(laptop, person, authorizeUrl(client, { scope: 'notes:read', state: 's', code_challenge: newPkce().challenge, code_challenge_method: 'S256' }));
    expect(consented.location).toContain('code=');
    expect(await app.app.get(AccessWithdrawalService).withdraw(personId, client.clientId)).toBe(true);
    // The failed sign-in is recorded after its answer (FailedSignIns.note): wait for its row.
    const recorded = () => app.app.get(AuditService).list(1, { event: { exact: SIGN_IN_FAILED }, person: personId });
    for (let tries = 0; tries < 100 && (await recorded()).length === 0; tries++) await new Promise((resolve) => setTimeout(resolve, 20));

    const after = await admin.request('GET', '/overview', auditor.token);
    expect(lastDay(after)).toEqual({
      sign_ins: lastDay(before).sign_ins + 2,
      failed_sign_ins: lastDay(before).failed_sign_ins + 1,
      new_devices: lastDay(before).new_devices + 1,
      consents_given: lastDay(before).consents_given + 1,
      consents_withdrawn: lastDay(before).consents_withdrawn + 1,
    });
    // Numbers only: nothing says who.
    expect(Object.values(lastDay(after)).every((count) => Number.isInteger(count))).toBe(true);
  });

  it('counts the events of the last 24 hours only: one just older is left out, one just younger is in', async () => {
    const reader = await admin.signIn(['client-admin']);
    const before = lastDay(await admin.request('GET', '/overview', reader.token));
    const now = Date.now();
    const event = (action: string, at: number) => ({ id: randomUUID(), at: new Date(at), actor: 'user:someone', ip: null, action, subject: 'user:someone', details: {} });
    await app.app
      .get(AuditEventStore)
      .insert([event('user.signed_in', now - 25 * HOUR), event('factor.failed', now - 24 * HOUR - 60_000), event('consent.given', now - 30 * 24 * HOUR), event('user.new_device', now - 24 * HOUR + 60_000)], app.dataSource.manager);
    const after = lastDay(await admin.request('GET', '/overview', reader.token));
    expect(after).toEqual({ ...before, new_devices: before.new_devices + 1 });
  });

  it('is refused without a token (401), without an admin scope (403), and once the role is gone (403)', async () => {
    expect((await admin.request('GET', '/overview')).status).toBe(401);
    const nobody = await admin.signIn([]);
    expect((await admin.request('GET', '/overview', nobody.token)).body.error).toBe('insufficient_scope');
    const auditor = await admin.signIn(['auditor']);
    await app.app.get(AdminRolesService).revoke(auditor.userId, 'auditor', 'cli');
    const refused = await admin.request('GET', '/overview', auditor.token);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('insufficient_scope');
  });
});
