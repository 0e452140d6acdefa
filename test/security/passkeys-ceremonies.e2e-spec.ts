/**
 * Passkey ceremonies an attacker tampers with (issue 33; WebAuthn Level 3 §7.1, §7.2, §13.4):
 * each response is real WebAuthn data from a software authenticator, changed in one way; each is
 * shown accepted untouched first, where that makes sense, then refused, with nothing stored.
 */
import { jest } from '@jest/globals';
import { auditActions, PasskeyTestApp, rowCount } from '../helpers/passkeys.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';
import { PasskeysService } from '../../src/passkeys/passkeys.service.js';
import { Clock } from '../../src/common/clock.js';

jest.setTimeout(60_000);

describe('passkey ceremonies under attack', () => {
  let app: PasskeyTestApp;
  let rpId: string;

  beforeAll(async () => {
    // Generous failures, so that the refusals below do not run into the rate limit, tested last with its own address.
    app = await PasskeyTestApp.start({ LOGIN_FREE_FAILURES: '50', LOGIN_IP_FREE_FAILURES: '200', PASSKEY_CEREMONIES_PER_MINUTE: '1000' });
    rpId = new URL(app.origin).hostname;
  });
  afterAll(async () => {
    await app?.stop();
  });

  async function userWithPasskey(authenticator = new SoftAuthenticator(rpId, app.origin)) {
    const user = await app.createUser();
    const browser = await app.signedIn(user);
    const added = await app.addPasskey(browser, authenticator);
    expect(added.status).toBe(200);
    return { user, authenticator };
  }

  it('a cloned authenticator (a signature counter that does not grow) is refused and recorded', async () => {
    const { user, authenticator } = await userWithPasskey();
    const clone = authenticator.clone();
    expect((await app.passkeySignIn(app.browser(), authenticator)).answer.status).toBe(200);
    // The clone holds the same key and reports the counter the original already used.
    const { answer } = await app.passkeySignIn(app.browser(), clone);
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'passkey_blocked' });
    // Backwards is refused as well.
    expect((await app.passkeySignIn(app.browser(), authenticator, { counter: 0 })).answer.status).toBe(403);
    const events = (await app.dataSource.query(`SELECT "action", "subject", "details" FROM "audit_events" WHERE "action" = 'passkey.cloned_authenticator'`)) as { subject: string; details: unknown }[];
    expect(events).toHaveLength(1);
    expect(events[0].subject).toBe(`user:${user.id}`);
    const details = typeof events[0].details === 'string' ? JSON.parse(events[0].details) : events[0].details;
    expect(details).toMatchObject({ stored_counter: 1, presented_counter: 1 });
    // Nothing tells the original from the copy: the passkey is blocked for both (passkey-clone-detection).
    expect((await app.passkeySignIn(app.browser(), authenticator)).answer.status).toBe(403);
  });

  it('an authenticator that keeps no counter (always 0) signs in every time', async () => {
    const { authenticator } = await userWithPasskey(new SoftAuthenticator(rpId, app.origin, { countsSignatures: false }));
    expect((await app.passkeySignIn(app.browser(), authenticator)).answer.status).toBe(200);
    expect((await app.passkeySignIn(app.browser(), authenticator)).answer.status).toBe(200);
  });

  it('a credential created without user verification (UV flag clear) is not registered', async () => {
    const user = await app.createUser();
    const browser = await app.signedIn(user);
    const before = await rowCount(app.dataSource, 'passkeys');
    const added = await app.addPasskey(browser, new SoftAuthenticator(rpId, app.origin), 'No UV', { userVerified: false });
    expect(added.status).toBe(400);
    expect(await rowCount(app.dataSource, 'passkeys')).toBe(before);
    expect(await app.nest.get(PasskeysService).countFor(user.id)).toBe(0);
  });

  it('an assertion without user verification is refused', async () => {
    const { authenticator } = await userWithPasskey();
    expect((await app.passkeySignIn(app.browser(), authenticator, { userVerified: false })).answer.status).toBe(401);
  });

  it("another origin's clientDataJSON is refused, at registration and at sign-in (phishing)", async () => {
    const user = await app.createUser();
    const browser = await app.signedIn(user);
    const phished = new SoftAuthenticator(rpId, 'https://login.example-phish.test');
    const before = await rowCount(app.dataSource, 'passkeys');
    expect((await app.addPasskey(browser, phished)).status).toBe(400);
    // A look-alike of our own origin: another port, another scheme.
    const port = new URL(app.origin).port;
    expect((await app.addPasskey(browser, new SoftAuthenticator(rpId, app.origin), 'x', { origin: `http://localhost:${Number(port) + 1}` })).status).toBe(400);
    expect((await app.addPasskey(browser, new SoftAuthenticator(rpId, app.origin), 'x', { origin: `https://localhost:${port}` })).status).toBe(400);
    expect(await rowCount(app.dataSource, 'passkeys')).toBe(before);

    const { authenticator } = await userWithPasskey();
    expect((await app.passkeySignIn(app.browser(), authenticator, { origin: 'https://login.example-phish.test' })).answer.status).toBe(401);
    const refusals = (await app.dataSource.query(`SELECT "details" FROM "audit_events" WHERE "action" = 'passkey.sign_in_refused'`)) as { details: unknown }[];
    const reasons = refusals.map((row) => (typeof row.details === 'string' ? JSON.parse(row.details) : row.details) as { reason: string }).map((d) => d.reason);
    expect(reasons.some((reason) => reason.includes('https://login.example-phish.test'))).toBe(true);
    expect((await app.passkeySignIn(app.browser(), authenticator)).answer.status).toBe(200);
  });

  it('a credential for another RP ID is refused', async () => {
    const user = await app.createUser();
    const browser = await app.signedIn(user);
    expect((await app.addPasskey(browser, new SoftAuthenticator('example.com', app.origin))).status).toBe(400);
    expect(await app.nest.get(PasskeysService).countFor(user.id)).toBe(0);
  });

  it('a replayed assertion is refused: the challenge is used up by the first answer, on any copy of the cookie', async () => {
    const { authenticator } = await userWithPasskey();
    const browser = app.browser();
    const login = await browser.get('/login');
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(login.body)![1];
    const options = JSON.parse((await browser.postJson('/login/passkey/options', { csrf_token: csrf })).body) as Record<string, unknown>;
    const response = authenticator.assert(options);
    const copy = browser.copy();
    const challengesBefore = await rowCount(app.dataSource, 'passkey_challenges');
    const first = await browser.postJson('/login/passkey', { csrf_token: csrf, return_to: '/', response });
    expect(first.status).toBe(200);
    expect(await rowCount(app.dataSource, 'passkey_challenges')).toBe(challengesBefore - 1);
    // The same response, with the cookie as it was before the first answer (naming the same challenge).
    const replayed = await copy.postJson('/login/passkey', { csrf_token: csrf, return_to: '/', response });
    expect(replayed.status).toBe(401);
    // The same response against a fresh challenge: its signature covers the old one.
    const again = app.browser();
    const page = await again.get('/login');
    const token = /name="csrf_token" value="([^"]+)"/.exec(page.body)![1];
    await again.postJson('/login/passkey/options', { csrf_token: token });
    expect((await again.postJson('/login/passkey', { csrf_token: token, return_to: '/', response })).status).toBe(401);
    expect((await again.get('/account')).body).not.toContain('You are signed in');
  });

  it('the same assertion sent to two instances at once signs in exactly once (the challenge is in the shared database)', async () => {
    const { authenticator } = await userWithPasskey();
    const other = await PasskeyTestApp.start({ ISSUER: app.origin });
    try {
      const browser = app.browser();
      const login = await browser.get('/login');
      const csrf = /name="csrf_token" value="([^"]+)"/.exec(login.body)![1];
      const options = JSON.parse((await browser.postJson('/login/passkey/options', { csrf_token: csrf })).body) as Record<string, unknown>;
      const response = authenticator.assert(options);
      const atOther = browser.copy(other.baseUrl);
      const answers = await Promise.all([browser, atOther, browser.copy(), atOther.copy()].map((b) => b.postJson('/login/passkey', { csrf_token: csrf, return_to: '/', response })));
      expect(answers.map((a) => a.status).sort()).toEqual([200, 401, 401, 401]);
      // The other instance itself accepts a passkey sign-in it was asked for: it refused the copies for their challenge.
      expect((await other.passkeySignIn(other.browser(), authenticator)).answer.status).toBe(200);
    } finally {
      await other.nest.close();
    }
  });

  it('a challenge expires: an answer after the ceremony time (5 minutes) is refused', async () => {
    const { authenticator } = await userWithPasskey();
    const browser = app.browser();
    const login = await browser.get('/login');
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(login.body)![1];
    const options = JSON.parse((await browser.postJson('/login/passkey/options', { csrf_token: csrf })).body) as Record<string, unknown>;
    const later = new Date(Date.now() + 6 * 60_000);
    const clock = jest.spyOn(app.nest.get(Clock), 'now').mockImplementation(() => later);
    try {
      expect((await browser.postJson('/login/passkey', { csrf_token: csrf, return_to: '/', response: authenticator.assert(options) })).status).toBe(401);
    } finally {
      clock.mockRestore();
    }
  });

  it('a replayed registration is refused and stores nothing more', async () => {
    const user = await app.createUser();
    const browser = await app.signedIn(user);
    const csrf = await app.accountCsrf(browser);
    const options = JSON.parse((await browser.postJson('/account/passkeys/registration/options', { csrf_token: csrf })).body) as Record<string, unknown>;
    const response = new SoftAuthenticator(rpId, app.origin).register(options);
    const copy = browser.copy();
    expect((await browser.postJson('/account/passkeys/registration', { csrf_token: csrf, name: 'First', response })).status).toBe(200);
    // The same answer again, in the session that sent it (which now holds the passkey's proof): the challenge is spent.
    expect((await browser.postJson('/account/passkeys/registration', { csrf_token: csrf, name: 'Again', response })).status).toBe(400);
    // From a copy of the cookie taken before: that session has only the password, no longer the person's strongest factor.
    expect((await copy.postJson('/account/passkeys/registration', { csrf_token: csrf, name: 'Again', response })).status).toBe(403);
    expect((await app.nest.get(PasskeysService).listFor(user.id)).map((p) => p.name)).toEqual(['First']);
  });

  it('a challenge issued for a sign-in does not answer a registration', async () => {
    const user = await app.createUser();
    const browser = await app.signedIn(user);
    const csrf = await app.accountCsrf(browser);
    const signInOptions = JSON.parse((await browser.postJson('/login/passkey/options', { csrf_token: csrf })).body) as Record<string, unknown>;
    const response = new SoftAuthenticator(rpId, app.origin).register({ ...signInOptions, user: { id: 'x' } });
    expect((await browser.postJson('/account/passkeys/registration', { csrf_token: csrf, name: 'Crossed', response })).status).toBe(400);
    expect(await app.nest.get(PasskeysService).countFor(user.id)).toBe(0);
  });

  it('beginning ceremonies is limited per address, so nobody fills the challenge table', async () => {
    const limited = await PasskeyTestApp.start({ PASSKEY_CEREMONIES_PER_MINUTE: '3' });
    try {
      const browser = limited.browser();
      const login = await browser.get('/login');
      const csrf = /name="csrf_token" value="([^"]+)"/.exec(login.body)![1];
      const before = await rowCount(limited.dataSource, 'passkey_challenges');
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await browser.postJson('/login/passkey/options', { csrf_token: csrf })).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      expect(await rowCount(limited.dataSource, 'passkey_challenges')).toBe(before + 3);
    } finally {
      await limited.nest.close();
      delete process.env.PASSKEY_CEREMONIES_PER_MINUTE;
    }
  });

  it('failed passkey sign-ins are rate limited like passwords (429 with Retry-After)', async () => {
    // A second instance on the same database, with a tight allowance.
    const limited = await PasskeyTestApp.start({ LOGIN_FREE_FAILURES: '3', LOGIN_IP_FREE_FAILURES: '100' });
    try {
      const stranger = new SoftAuthenticator(new URL(limited.origin).hostname, limited.origin);
      stranger.register({ challenge: 'x', user: { id: 'eA' } });
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await limited.passkeySignIn(limited.browser(), stranger)).answer.status);
      expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
      const { answer } = await limited.passkeySignIn(limited.browser(), stranger);
      expect(answer.status).toBe(429);
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
      // While the wait lasts, even a good passkey is not checked.
      const user = await limited.createUser();
      const good = new SoftAuthenticator(new URL(limited.origin).hostname, limited.origin);
      const browser = await limited.signedIn(user);
      expect((await limited.addPasskey(browser, good)).status).toBe(200);
      expect((await limited.passkeySignIn(limited.browser(), good)).answer.status).toBe(429);
      expect(await auditActions(limited.dataSource)).toContain('passkey.added');
    } finally {
      await limited.nest.close();
    }
  });
});
