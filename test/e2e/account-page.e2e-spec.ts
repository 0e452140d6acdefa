/**
 * Issue 48, part 3: one account page for each person at /account, over a real port, on SQLite or
 * PostgreSQL. Each section renders; each form changes only the signed-in person's own profile,
 * password, sessions and grants, audited with the address; a form without this session's CSRF
 * token, or from another site, is refused and changes nothing.
 */
import { jest } from '@jest/globals';
import { UsersService } from '../../src/users/users.service.js';
import { apiStatus, applicationWithTokens, basicAuthOf, Browser, csrfOn, eventsAbout, otherSessionIds, postForm, signedIn, signInWith, tablesOf, type Person } from '../helpers/account-page.js';
import { PasskeyTestApp } from '../helpers/passkeys.js';
import { enrolFrom } from '../helpers/second-factor.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';

jest.setTimeout(60_000);

describe('the account page (/account)', () => {
  let app: PasskeyTestApp;

  beforeAll(async () => {
    app = await PasskeyTestApp.start();
  });
  afterAll(async () => app?.stop());

  const person = async (): Promise<Person> => app.createUser();
  const browserOf = async (who: Person): Promise<Browser> => app.signedIn(who);
  const account = async (browser: Browser) => browser.get('/account');

  it('sends a signed-out visitor to sign in and back, and a signed-in one from / to here', async () => {
    const who = await person();
    const browser = app.browser();
    expect(await browser.get('/account')).toMatchObject({ status: 303, location: '/login?return_to=%2Faccount' });
    expect((await browser.get('/')).status).toBe(200);
    const login = await browser.get('/login?return_to=%2Faccount');
    expect(await browser.submit(login, '/login', { username: who.username, password: who.password })).toMatchObject({ status: 303, location: '/account' });
    expect(await browser.get('/')).toMatchObject({ status: 303, location: '/account' });
  });

  it('renders every section, one h1, headings in order, a label on every field, and no script', async () => {
    const who = await person();
    const browser = await browserOf(who);
    await enrolFrom(browser, await browser.get('/account/one-time-codes'), Date.now());
    const origin = new URL(app.origin);
    expect((await app.addPasskey(browser, new SoftAuthenticator(origin.hostname, app.origin), 'Work laptop')).status).toBe(200);
    await applicationWithTokens(app, browser, who, 'Photo <App>');
    const page = await account(browser);
    expect(page.status).toBe(200);
    const headings = [...page.body.matchAll(/<h(\d)[^>]*>([^<]*)</g)].map((m) => `h${m[1]} ${m[2]}`);
    expect(headings).toEqual(['h1 Your account', 'h2 Profile', 'h2 Password', 'h2 Second factor', 'h2 Passkeys', 'h3 Work laptop', 'h2 Where you are signed in', 'h3 This device', 'h2 Applications with access', 'h3 Photo &lt;App&gt;', 'h2 Recent security events']);
    expect(page.body).toContain(`You are signed in as <strong>${who.username}</strong>.`);
    expect(page.body).toContain('One-time codes are on since');
    expect(page.body).toContain('10 recovery codes are left.');
    expect(page.body).toContain('aria-label="Remove the passkey Work laptop"');
    expect(page.body).toContain('Applications signed in through it: Photo &lt;App&gt;.');
    expect(page.body).toContain('You are not signed in anywhere else.');
    // Node's fetch says `node`: a tool's name is its device.
    expect(page.body).toMatch(/<h3>This device<\/h3>\s*<p class="note">node, from 127\.0\.0\.1 · Signed in /);
    expect(page.body).toMatch(/Signed in with your password<\/span> · from 127\.0\.0\.1/);
    expect(page.body).toContain('Passkey added: Work laptop');
    expect(page.body).toContain('One-time codes turned on, with new recovery codes');
    for (const [, id] of page.body.matchAll(/<input id="([^"]+)"/g)) expect(page.body).toContain(`<label for="${id}">`);
    expect(page.body).not.toMatch(/<input (?!type="hidden")(?![^>]*\bid=)/);
    expect(page.body).not.toContain('<script');
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('script-src');
    expect(page.headers.get('cache-control')).toBe('no-store');
    // The passkey's Remove button comes back here (the passkeys page's own form goes back there).
    const removed = await browser.submit(page, '/account/passkeys/remove');
    expect(removed).toMatchObject({ status: 303, location: '/account?done=passkey-removed#passkeys' });
    expect((await browser.get(removed.location!)).body).toContain('The passkey was removed.');
  });

  it('refuses a bad email with 400, the error and the typed values, storing nothing; then saves a good profile', async () => {
    const who = await person();
    const browser = await browserOf(who);
    const before = await tablesOf(app.dataSource, who.id);
    const refused = await browser.submit(await account(browser), '/account/profile', { name: 'Ada Lovelace', email: 'not an address' });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('Your profile was not saved');
    expect(refused.body).toContain('<p class="field-error" id="profile-email-error">Enter an email address, such as name@example.com, or leave the field empty.</p>');
    expect(refused.body).toContain('value="not an address" aria-describedby="profile-email-error profile-email-note" aria-invalid="true"');
    expect(refused.body).toContain('value="Ada Lovelace"');
    expect(await tablesOf(app.dataSource, who.id)).toEqual(before);

    const saved = await browser.submit(await account(browser), '/account/profile', { name: 'Ada Lovelace', email: 'ada@example.org' });
    expect(saved).toMatchObject({ status: 303, location: '/account?done=profile#profile' });
    const user = await app.nest.get(UsersService).findById(who.id);
    expect([user?.name, user?.email, user?.emailVerified]).toEqual(['Ada Lovelace', 'ada@example.org', false]);
    expect((await browser.get(saved.location!)).body).toContain('Your profile was saved.');
    expect((await eventsAbout(app.dataSource, who.id)).at(-1)).toEqual({ action: 'user.updated', actor: `user:${who.id}`, ip: '127.0.0.1' });
  });

  it('changes the password only with the current one, and signs out every other browser', async () => {
    const who = await person();
    const browser = await browserOf(who);
    const other = await browserOf(who);
    const change = async (current: string) => browser.submit(await account(browser), '/account/password', { current_password: current, new_password: 'a brand new passphrase', new_password_confirm: 'a brand new passphrase' });
    const before = await tablesOf(app.dataSource, who.id);
    const wrong = await change('not my password');
    expect(wrong.status).toBe(400);
    expect(wrong.body).toContain('Your current password is not right.');
    expect(await signedIn(other)).toBe(true);
    expect((await tablesOf(app.dataSource, who.id) as { user: unknown }).user).toEqual((before as { user: unknown }).user);

    expect(await change(who.password)).toMatchObject({ status: 303, location: '/account?done=password&ended=1#password' });
    expect(await signedIn(other)).toBe(false);
    expect(await signedIn(browser)).toBe(true);
    expect((await signInWith(app.browser(), who.username, who.password)).status).toBe(401);
    expect((await signInWith(app.browser(), who.username, 'a brand new passphrase')).status).toBe(303);
    const events = (await eventsAbout(app.dataSource, who.id)).map((e) => e.action);
    expect(events).toEqual(expect.arrayContaining(['user.password_change_refused', 'user.password_changed']));
  });

  it('ends one other session (that browser is signed out), then every other one', async () => {
    const who = await person();
    const [mine, laptop, phone, tablet] = [await browserOf(who), await browserOf(who), await browserOf(who), await browserOf(who)];
    const page = await account(mine);
    expect(page.body).toContain('You are also signed in on 3 other browsers or devices.');
    const [newest] = otherSessionIds(page);
    const ended = await mine.post('/account/sessions/end', { csrf_token: csrfOn(page, '/account/sessions/end'), session_id: newest });
    expect(ended).toMatchObject({ status: 303, location: '/account?done=session#sessions' });
    expect([await signedIn(mine), await signedIn(laptop), await signedIn(phone), await signedIn(tablet)]).toEqual([true, true, true, false]);
    expect((await eventsAbout(app.dataSource, who.id)).at(-1)).toEqual({ action: 'session.ended', actor: `user:${who.id}`, ip: '127.0.0.1' });

    const everywhere = await mine.submit(await account(mine), '/account/sessions/end-others');
    expect(everywhere).toMatchObject({ status: 303, location: '/account?done=others&ended=2#sessions' });
    expect((await mine.get(everywhere.location!)).body).toContain('You were signed out on 2 other browsers.');
    expect([await signedIn(mine), await signedIn(laptop), await signedIn(phone)]).toEqual([true, false, false]);
    expect((await eventsAbout(app.dataSource, who.id)).at(-1)).toMatchObject({ action: 'user.signed_out_elsewhere', ip: '127.0.0.1' });
  });

  it("withdraws an application's access: its tokens are revoked", async () => {
    const who = await person();
    const browser = await browserOf(who);
    const photos = await applicationWithTokens(app, browser, who, 'Photos');
    expect(await apiStatus(app, photos.access)).toBe(200);
    const page = await account(browser);
    const withdrawn = await browser.submit(page, '/account/access/withdraw', { client_id: photos.clientId });
    expect(withdrawn).toMatchObject({ status: 303, location: `/account?done=withdrawn&client=${photos.clientId}#applications` });
    expect((await browser.get(withdrawn.location!)).body).toContain('<strong>Photos</strong> no longer has access to your data.');
    expect(await apiStatus(app, photos.access)).toBe(401);
    expect((await postForm(app, { grant_type: 'refresh_token', refresh_token: photos.refresh }, basicAuthOf(photos))).error).toBe('invalid_grant');
  });

  it('lists a failed and a successful sign-in among the security events, newest first, with the address', async () => {
    const who = await person();
    expect((await signInWith(app.browser(), who.username, 'a wrong guess')).status).toBe(401);
    const browser = await browserOf(who);
    const events = [...(await account(browser)).body.matchAll(/<li><time [^>]*>[^<]*<\/time> · <span[^>]*>([^<]*)<\/span> · from ([^<]*)<\/li>/g)].map((m) => `${m[1]} from ${m[2]}`);
    expect(events.slice(0, 2)).toEqual(['Signed in with your password from 127.0.0.1', 'Failed sign-in: wrong password from 127.0.0.1']);
    expect((await signInWith(app.browser(), 'nobody-by-this-name', 'a wrong guess')).status).toBe(401);
    expect(await eventsAbout(app.dataSource, who.id)).toEqual([
      { action: 'user.sign_in_failed', actor: `user:${who.id}`, ip: '127.0.0.1' },
      { action: 'user.signed_in', actor: `user:${who.id}`, ip: '127.0.0.1' },
    ]);
  });

  it("cannot end another person's session or withdraw another person's grant: 404, nothing changes", async () => {
    const alice = await person();
    const aliceBrowser = await browserOf(alice);
    const aliceApp = await applicationWithTokens(app, aliceBrowser, alice, 'Alice app');
    const aliceLaptop = await browserOf(alice);
    const [aliceSession] = otherSessionIds(await account(aliceBrowser));
    const mallory = await person();
    const malloryBrowser = await browserOf(mallory);
    const before = [await tablesOf(app.dataSource, alice.id), await tablesOf(app.dataSource, mallory.id)];
    // Mallory's own page has no such forms: her token, with Alice's session and Alice's application.
    const token = csrfOn(await account(malloryBrowser), '/logout');
    expect((await malloryBrowser.post('/account/sessions/end', { csrf_token: token, session_id: aliceSession })).status).toBe(404);
    expect((await malloryBrowser.post('/account/access/withdraw', { csrf_token: token, client_id: aliceApp.clientId })).status).toBe(404);
    expect([await tablesOf(app.dataSource, alice.id), await tablesOf(app.dataSource, mallory.id)]).toEqual(before);
    expect(await signedIn(aliceLaptop)).toBe(true);
    expect(await apiStatus(app, aliceApp.access)).toBe(200);
  });

  describe('refuses every form without the CSRF token, or from another site, and changes nothing', () => {
    const forms = (sessionId: string, clientId: string): [string, Record<string, string>][] => [
      ['/account/profile', { name: 'Mallory', email: 'mallory@example.org' }],
      ['/account/password', { current_password: 'correct horse battery staple', new_password: 'taken over now', new_password_confirm: 'taken over now' }],
      ['/account/sessions/end', { session_id: sessionId }],
      ['/account/sessions/end-others', {}],
      ['/account/access/withdraw', { client_id: clientId }],
    ];

    it.each([
      ['without the token', (_token: string) => ({ fields: {}, headers: {} })],
      ['with a wrong token', (_token: string) => ({ fields: { csrf_token: 'x'.repeat(43) }, headers: {} })],
      ['from another site (Fetch Metadata)', (token: string) => ({ fields: { csrf_token: token }, headers: { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' } })],
    ])('%s', async (_case, attempt) => {
      const who = await person();
      const browser = await browserOf(who);
      const grant = await applicationWithTokens(app, browser, who, 'Kept');
      const other = await browserOf(who);
      const page = await account(browser);
      const [sessionId] = otherSessionIds(page);
      const before = await tablesOf(app.dataSource, who.id);
      for (const [action, fields] of forms(sessionId, grant.clientId)) {
        const { fields: extra, headers } = attempt(csrfOn(page, '/logout'));
        expect([action, (await browser.post(action, { ...fields, ...extra }, headers)).status]).toEqual([action, 403]);
      }
      expect(await tablesOf(app.dataSource, who.id)).toEqual(before);
      expect(await signedIn(other)).toBe(true);
    });
  });
});
