/**
 * Who may add or remove a passkey (issue 33): only the signed-in person, from our own pages (CSRF
 * token), within minutes of signing in, and only their own. Each refusal leaves the database as it was.
 */
import { jest } from '@jest/globals';
import { Clock } from '../../src/common/clock.js';
import { PasskeysService } from '../../src/passkeys/passkeys.service.js';
import { PasskeyTestApp, rowCount } from '../helpers/passkeys.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';

jest.setTimeout(60_000);

describe('changing passkeys needs a recent sign-in of the owner', () => {
  let app: PasskeyTestApp;
  let rpId: string;

  beforeAll(async () => {
    app = await PasskeyTestApp.start();
    rpId = new URL(app.origin).hostname;
  });
  afterAll(async () => {
    await app?.stop();
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });

  /** A person with one passkey, the browser they added it with, and its id. */
  async function owner() {
    const user = await app.createUser();
    const browser = await app.signedIn(user);
    const authenticator = new SoftAuthenticator(rpId, app.origin);
    expect((await app.addPasskey(browser, authenticator, 'Mine')).status).toBe(200);
    const [passkey] = await app.nest.get(PasskeysService).listFor(user.id);
    return { user, browser, authenticator, passkeyId: passkey.id };
  }

  async function tables(): Promise<[number, number]> {
    return [await rowCount(app.dataSource, 'passkeys'), await rowCount(app.dataSource, 'passkey_challenges')];
  }

  it('nobody signed in: no options, no registration, no removal', async () => {
    const { passkeyId } = await owner();
    const before = await tables();
    const anonymous = app.browser();
    const login = await anonymous.get('/login');
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(login.body)![1];
    expect((await anonymous.postJson('/account/passkeys/registration/options', { csrf_token: csrf })).status).toBe(401);
    const response = new SoftAuthenticator(rpId, app.origin).register({ challenge: 'AAAA', user: { id: 'eA' } });
    expect((await anonymous.postJson('/account/passkeys/registration', { csrf_token: csrf, name: 'Planted', response })).status).toBe(401);
    const removal = await anonymous.post('/account/passkeys/remove', { csrf_token: csrf, passkey_id: passkeyId });
    expect(removal.status).toBe(200);
    expect(removal.body).toContain('action="/login"');
    expect(await tables()).toEqual(before);
  });

  it('a wrong or missing CSRF token: nothing added or removed', async () => {
    const { browser, passkeyId } = await owner();
    const before = await tables();
    for (const csrf_token of ['forged', undefined]) {
      expect((await browser.postJson('/account/passkeys/registration/options', { csrf_token })).status).toBe(403);
      expect((await browser.post('/account/passkeys/remove', { csrf_token: csrf_token ?? '', passkey_id: passkeyId })).status).toBe(403);
    }
    expect(await tables()).toEqual(before);
  });

  it('a sign-in older than 5 minutes, or a password sign-in of a person who has a passkey: no options, no registration of a ceremony begun in time, no removal', async () => {
    const { user, browser, authenticator, passkeyId } = await owner();
    const csrf = await app.accountCsrf(browser);
    const options = JSON.parse((await browser.postJson('/account/passkeys/registration/options', { csrf_token: csrf })).body) as Record<string, unknown>;
    const before = await tables();
    const sixMinutesLater = new Date(Date.now() + 6 * 60_000);
    jest.spyOn(app.nest.get(Clock), 'now').mockImplementation(() => sixMinutesLater);

    const stale = await browser.postJson('/account/passkeys/registration/options', { csrf_token: csrf });
    expect(stale.status).toBe(403);
    expect(JSON.parse(stale.body)).toMatchObject({ error: 'login_required' });
    const response = new SoftAuthenticator(rpId, app.origin).register(options);
    expect((await browser.postJson('/account/passkeys/registration', { csrf_token: csrf, name: 'Late', response })).status).toBe(403);
    expect((await browser.post('/account/passkeys/remove', { csrf_token: csrf, passkey_id: passkeyId })).status).toBe(403);
    // The page says why instead of offering the forms.
    const page = await browser.get('/account/passkeys');
    expect(page.body).toContain('id="passkeys-reauthenticate"');
    expect(page.body).not.toContain('action="/account/passkeys/remove"');
    expect(await tables()).toEqual(before);
    expect(await app.nest.get(PasskeysService).countFor(user.id)).toBe(1);

    // The person has a passkey, the strongest factor they have: the page asks for it, not for the
    // password, and a password sign-in (now) still does not allow the change.
    expect(page.body).not.toContain('type="password"');
    const withPassword = await app.signedIn(user);
    const passwordPage = await withPassword.get('/account/passkeys');
    expect(passwordPage.body).toContain('id="passkeys-reauthenticate"');
    const passwordCsrf = /data-csrf-token="([^"]+)"/.exec(passwordPage.body)?.[1];
    expect(passwordCsrf).toBeDefined();
    expect((await withPassword.post('/account/passkeys/remove', { csrf_token: passwordCsrf!, passkey_id: passkeyId })).status).toBe(403);
    expect(await tables()).toEqual(before);
    // A sign-in with the passkey (now) makes the change possible again.
    const withPasskey = app.browser();
    expect((await app.passkeySignIn(withPasskey, authenticator)).answer.status).toBe(200);
    const fresh = await withPasskey.get('/account/passkeys');
    expect(fresh.body).not.toContain('id="passkeys-reauthenticate"');
    expect((await withPasskey.submit(fresh, '/account/passkeys/remove', { passkey_id: passkeyId })).status).toBe(303);
    expect(await app.nest.get(PasskeysService).countFor(user.id)).toBe(0);
  });

  it("someone cannot remove another person's passkey", async () => {
    const victim = await owner();
    const attacker = await owner();
    const csrf = await app.accountCsrf(attacker.browser);
    const attempt = await attacker.browser.post('/account/passkeys/remove', { csrf_token: csrf, passkey_id: victim.passkeyId });
    expect(attempt.status).toBe(404);
    expect(await app.nest.get(PasskeysService).countFor(victim.user.id)).toBe(1);
    // Their own goes.
    expect((await attacker.browser.post('/account/passkeys/remove', { csrf_token: csrf, passkey_id: attacker.passkeyId })).status).toBe(303);
    expect(await app.nest.get(PasskeysService).countFor(attacker.user.id)).toBe(0);
  });

  it('a passkey id that is not a UUID names none: 404, never a 500, and nothing removed', async () => {
    const someone = await owner();
    const csrf = await app.accountCsrf(someone.browser);
    for (const passkeyId of ['not-a-uuid', "' OR 1=1 --", '', `${someone.passkeyId}x`]) {
      expect((await someone.browser.post('/account/passkeys/remove', { csrf_token: csrf, passkey_id: passkeyId })).status).toBe(404);
    }
    expect(await app.nest.get(PasskeysService).countFor(someone.user.id)).toBe(1);
  });

  it("a registration ceremony begun by one person cannot be finished in another's session", async () => {
    const first = await owner();
    const second = await owner();
    const csrf = await app.accountCsrf(first.browser);
    const options = JSON.parse((await first.browser.postJson('/account/passkeys/registration/options', { csrf_token: csrf })).body) as Record<string, unknown>;
    const response = new SoftAuthenticator(rpId, app.origin).register(options);
    const secondCsrf = await app.accountCsrf(second.browser);
    expect((await second.browser.postJson('/account/passkeys/registration', { csrf_token: secondCsrf, name: 'Stolen', response })).status).toBe(400);
    expect(await app.nest.get(PasskeysService).countFor(second.user.id)).toBe(1);
  });
});
